import { seconds } from './describe.ts';

/**
 * One start-up attempt's deadline: its abort signal fires after `startupTimeout`, unless a browser
 * authorization re-arms it for longer; and whether the browser was asked (then a failure waits
 * for the user instead of restarting).
 */
export class StartAttempt {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  askedBrowser = false;

  constructor(
    private readonly server: string,
    private readonly startupTimeoutMs: number,
  ) {
    this.startupDeadline();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the attempt was aborted, when it was. */
  get abortReason(): string | undefined {
    return this.signal.aborted ? (this.signal.reason as Error).message : undefined;
  }

  /** The browser was asked: the attempt waits `ms` for the user. */
  waitForBrowser(ms: number): void {
    this.askedBrowser = true;
    this.arm(ms, `was not authorized within ${seconds(ms)}; run niffler mcp login ${this.server}`);
  }

  /** Back to the start-up deadline (the browser flow ended). */
  startupDeadline(): void {
    const ms = this.startupTimeoutMs;
    this.arm(ms, `did not start within ${seconds(ms)} (startupTimeout)`);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  private arm(ms: number, message: string): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(new Error(message)), ms);
  }
}
