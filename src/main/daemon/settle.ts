import {
  describeReduction,
  reduceMemory,
  type Reduction,
} from '../../workers/shared/reduce-memory.ts';

// What a daemon gives back once it has warmed itself (engine/prewarm.ts): its start-up — the
// engine's code and config, the MCP worker's client and catalogs, the API worker's client library
// and first request, the tools' definitions — grew each thread's heap (this thread's young
// generation to 16 MiB), and a plain collection (quiet-gc.ts) keeps what a heap grew into. Once
// the warming is done and nobody is attached, each long-lived thread — this one, the MCP worker,
// the API worker once its warming is done — runs a memory-reducing collection
// (workers/shared/reduce-memory.ts): ~20 MB of the idle daemon's resident size, given back now
// rather than when V8's memory reducer would, ~20 s later. Once: the turns that follow grow the
// heaps again for what they need, and collecting their garbage is quiet-gc.ts's.

interface SettleOptions {
  /**
   * Quiet for this long after the warming or the last activity, nobody attached: settle (2 s, as
   * quiet-gc.ts waits). A prompt that comes meanwhile attaches first: the collection, tens of ms
   * of each thread, waits for its turn to end rather than delay it.
   */
  quietMs?: number;
  /** Reduces this thread's heap (shared/reduce-memory.ts). */
  reduceHere?: () => Reduction;
  /** Where the line saying what this thread gave back goes. */
  log?: (msg: string) => void;
}

export interface Settleable {
  readonly clients: number;
  readonly runningTurns: number;
  readonly mcp: { reduceMemory(): void };
  readonly api: { reduceMemory(): void };
}

/**
 * Call `warmed(engine)` when the daemon's warming is done, `activity(engine)` whenever clients or
 * running turns change; `clear()` when the daemon stops.
 */
export const settleOnceWarm = ({
  quietMs = 2000,
  reduceHere = reduceMemory,
  log = () => {},
}: SettleOptions = {}) => {
  let engine: Settleable | undefined;
  let warmed = false;
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const busy = (e: Settleable) => e.clients > 0 || e.runningTurns > 0;
  const settle = (): void => {
    const e = engine;
    if (settled || !e || busy(e)) return;
    settled = true;
    log(`warmed; daemon thread: ${describeReduction(reduceHere())}`);
    e.mcp.reduceMemory();
    e.api.reduceMemory();
  };
  const arm = (e: Settleable): void => {
    engine = e;
    clearTimeout(timer);
    if (settled || !warmed || busy(e)) return;
    timer = setTimeout(settle, quietMs);
    timer.unref();
  };
  return {
    warmed: (e: Settleable): void => {
      warmed = true;
      arm(e);
    },
    activity: arm,
    clear: (): void => clearTimeout(timer),
  };
};
