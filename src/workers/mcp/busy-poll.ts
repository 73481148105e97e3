import { performance } from 'node:perf_hooks';

/** How much of the wall time a polling thread must get on a CPU for the poll to go on. */
const MIN_SHARE = 0.8;
/** How long a stretch of polling is before its share is judged. */
const JUDGE_AFTER_MS = 2;
/**
 * How long polling stays off after a stretch got less than its share: doubled at each such stretch
 * in a row, up to the maximum, and back to the minimum after a stretch that got its share.
 */
const BACK_OFF_MS = { min: 50, max: 10_000 };

/**
 * This thread's CPU time in ms; `undefined` where it cannot be told well enough to judge a 2 ms
 * stretch, and then there is no polling at all: an older Node, a platform that refuses, Windows
 * (its thread times move in steps of about 15 ms).
 */
const threadCpuMs = (): number | undefined => {
  if (typeof process.threadCpuUsage !== 'function' || process.platform === 'win32')
    return undefined;
  try {
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1000;
  } catch {
    return undefined;
  }
};

/** The clocks a poll reads: wall time and this thread's CPU time, both in ms. */
export interface PollClock {
  now(): number;
  cpu(): number | undefined;
}

const threadClock: PollClock = { now: () => performance.now(), cpu: threadCpuMs };

/**
 * Keeps a thread's event loop polling, instead of sleeping, for `windowMs` after its last activity
 * — while the machine has a core to spare.
 *
 * A sleeping thread takes a wake-up to see a message: about 90 µs between two idle threads on a
 * small VM, more than the whole of an MCP call to a fast local server. The MCP worker has two such
 * waits per call — the request from main, then the server's answer — and while calls come and go
 * each is usually within a fraction of a millisecond of the last thing it did. Polling through that
 * window takes both at once: sequential calls lose a wake-up each and concurrent ones stop queueing
 * behind them (at concurrency 8 the worker keeps up with the raw SDK client's rate instead of
 * reaching 0.8 of it).
 *
 * The price is CPU, and it only pays while a core would otherwise idle. When the cores are busy —
 * a build alongside — a polling thread only slows down whoever it competes with, our own server
 * first (at concurrency 8 with one core kept busy elsewhere, polling regardless cut the rate by a
 * third). So each stretch of polling is judged after `JUDGE_AFTER_MS`: a thread that got less than
 * `MIN_SHARE` of that time on a CPU was made to wait for one, and polling stops for a while, longer
 * each time in a row (a stretch lost to contention costs the others a whole time slice).
 *
 * Between bursts (a model thinking, a user typing) the thread sleeps as before, and the poll never
 * keeps a thread alive on its own for longer than the window.
 */
export class BusyPoll {
  private last = 0;
  private polling = false;
  private offUntil = 0;
  private backOffMs = BACK_OFF_MS.min;
  /** Where the stretch of polling being judged began, in wall and CPU time. */
  private since = { wall: 0, cpu: 0 };

  private readonly windowMs: number;

  /** Never polls where the clock cannot tell this thread's CPU time: decided once, here. */
  constructor(
    windowMs: number,
    private readonly clock: PollClock = threadClock,
  ) {
    this.windowMs = clock.cpu() === undefined ? 0 : windowMs;
  }

  /** Marks activity: polls from now until `windowMs` pass without another. */
  touch(): void {
    if (this.windowMs <= 0) return;
    const now = this.clock.now();
    this.last = now;
    if (this.polling || now < this.offUntil) return;
    this.polling = true;
    this.since = { wall: now, cpu: this.clock.cpu() ?? 0 };
    setImmediate(this.poll);
  }

  /** True while the loop is being kept polling. */
  get active(): boolean {
    return this.polling;
  }

  private readonly poll = (): void => {
    const now = this.clock.now();
    if (now - this.last > this.windowMs) {
      this.polling = false;
      return;
    }
    if (now - this.since.wall >= JUDGE_AFTER_MS) {
      const cpu = this.clock.cpu() ?? 0;
      if ((cpu - this.since.cpu) / (now - this.since.wall) < MIN_SHARE) {
        this.polling = false;
        this.offUntil = now + this.backOffMs;
        this.backOffMs = Math.min(this.backOffMs * 2, BACK_OFF_MS.max);
        return;
      }
      this.backOffMs = BACK_OFF_MS.min;
      this.since = { wall: now, cpu };
    }
    // One turn of the loop: the poll phase looks at every handle without blocking, then here again.
    setImmediate(this.poll);
  };
}
