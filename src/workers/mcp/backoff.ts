import type { McpHealthOptions } from '../protocol/mcp.ts';

/** Health tuning with every default filled in. */
export type Health = Required<McpHealthOptions>;

export const DEFAULT_HEALTH: Health = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  maxFailures: 5,
  failureWindowMs: 5 * 60_000,
  pingIntervalMs: 30_000,
  pingTimeoutMs: 10_000,
  killGraceMs: 2_000,
};

export const withDefaults = (options: McpHealthOptions = {}): Health => ({
  ...DEFAULT_HEALTH,
  ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
});

/**
 * Exponential backoff over the failures of the last `failureWindowMs`: 0.5 s, 1 s, 2 s … capped
 * at `maxDelayMs`; at `maxFailures` within the window it gives up (`null`).
 */
export class RestartPolicy {
  private failures: number[] = [];

  constructor(private readonly health: Health) {}

  /** Records a failure at `now`; returns the delay before the next attempt, or null to give up. */
  next(now: number): number | null {
    this.failures = this.failures.filter((at) => now - at < this.health.failureWindowMs);
    this.failures.push(now);
    if (this.failures.length >= this.health.maxFailures) return null;
    return Math.min(
      this.health.maxDelayMs,
      this.health.initialDelayMs * 2 ** (this.failures.length - 1),
    );
  }

  /** A start by hand forgets past failures. */
  reset(): void {
    this.failures = [];
  }
}

/**
 * The restarts of one server: the policy's delays, the one restart scheduled at a time (its
 * timer and when it fires, for `mcp status`), and how many there were.
 */
export class Restarts {
  count = 0;
  nextAt: number | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly policy: RestartPolicy;

  constructor(health: Health) {
    this.policy = new RestartPolicy(health);
  }

  /** Records a failure; the delay before the next attempt, or null to give up. */
  failure(now = Date.now()): number | null {
    return this.policy.next(now);
  }

  /** A start by hand forgets past failures. */
  reset(): void {
    this.policy.reset();
  }

  /** Runs `restart` after `delay` (counted as a restart), unless cancelled first. */
  schedule(delay: number, restart: () => void): void {
    this.cancel();
    this.nextAt = Date.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.nextAt = null;
      this.count++;
      restart();
    }, delay);
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.nextAt = null;
  }
}
