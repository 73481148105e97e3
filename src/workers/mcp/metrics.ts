import type { McpCallMetrics } from '../protocol/mcp.ts';

const WINDOW = 512;

/** How one call ended, for the counters. */
export type CallOutcome = 'ok' | 'error' | 'timeout';

/** Call counters and a sliding window of latencies (the last 512 calls) for p50/p95. */
export class CallStats {
  private calls = 0;
  private errors = 0;
  private timeouts = 0;
  // A ring: recording is O(1) on the call path; only `snapshot` sorts.
  private readonly latencies = new Float64Array(WINDOW);

  record(outcome: CallOutcome, ms: number): void {
    this.latencies[this.calls % WINDOW] = ms;
    this.calls++;
    if (outcome === 'error') this.errors++;
    if (outcome === 'timeout') {
      this.errors++;
      this.timeouts++;
    }
  }

  snapshot(): McpCallMetrics {
    const sorted = this.latencies.slice(0, Math.min(this.calls, WINDOW)).sort();
    return {
      calls: this.calls,
      errors: this.errors,
      timeouts: this.timeouts,
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
    };
  }
}

/** Nearest-rank percentile of an ascending array; `null` when empty. */
export const percentile = (sorted: ArrayLike<number>, p: number): number | null => {
  if (sorted.length === 0) return null;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[index]! * 100) / 100;
};

/** Per-server and per-tool stats. */
export class ServerStats {
  readonly total = new CallStats();
  private readonly perTool = new Map<string, CallStats>();

  record(tool: string, outcome: CallOutcome, ms: number): void {
    this.total.record(outcome, ms);
    let stats = this.perTool.get(tool);
    if (!stats) this.perTool.set(tool, (stats = new CallStats()));
    stats.record(outcome, ms);
  }

  tools(): Record<string, McpCallMetrics> {
    return Object.fromEntries([...this.perTool].map(([tool, stats]) => [tool, stats.snapshot()]));
  }
}
