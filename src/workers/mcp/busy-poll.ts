import { performance } from 'node:perf_hooks';

/**
 * Keeps a thread's event loop polling, instead of sleeping, for `windowMs` after its last activity.
 *
 * A sleeping thread takes a wake-up to see a message: about 90 µs between two idle threads on a
 * small VM, more than the whole of an MCP call to a fast local server. The MCP worker has two such
 * waits per call — the request from main, then the server's answer — and while calls come and go
 * each is usually within a fraction of a millisecond of the last thing it did. Polling through that
 * window takes both at once: sequential calls lose a wake-up each and concurrent ones stop queueing
 * behind them (at concurrency 8 the worker keeps up with the raw SDK client's rate instead of
 * reaching 0.8 of it).
 *
 * The price is CPU: at most `windowMs` after each burst of traffic, a core while traffic is
 * steady. Between bursts (a model thinking, a user typing) the thread sleeps as before, and the
 * poll never keeps a thread alive on its own for longer than the window.
 */
export class BusyPoll {
  private last = 0;
  private polling = false;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Marks activity: polls from now until `windowMs` pass without another. */
  touch(): void {
    if (this.windowMs <= 0) return;
    this.last = this.now();
    if (this.polling) return;
    this.polling = true;
    setImmediate(this.poll);
  }

  /** True while the loop is being kept polling. */
  get active(): boolean {
    return this.polling;
  }

  private readonly poll = (): void => {
    if (this.now() - this.last > this.windowMs) {
      this.polling = false;
      return;
    }
    // One turn of the loop: the poll phase looks at every handle without blocking, then here again.
    setImmediate(this.poll);
  };
}
