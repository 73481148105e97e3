import {
  describeReduction,
  reduceMemory,
  type Reduction,
} from '../../workers/shared/reduce-memory.ts';

// What a daemon gives back once it has warmed itself (engine/prewarm.ts): its start-up — the
// engine's code and config, the tools' definitions — grew this thread's young generation to 16 MiB
// (its size is not capped, see threads/entry.ts: the workers' are, at 3 MiB), and a plain
// collection (quiet-gc.ts) keeps what a heap grew into. Once the warming is done and nobody is
// attached, this thread runs a memory-reducing collection (workers/shared/reduce-memory.ts): ~17
// MB of the idle daemon's resident size for ~60 ms of this thread, now rather than when V8's
// memory reducer would, 8-20 s later — or, as measured here in one run of three, not at all. The
// workers are left to V8: a reduction gives back 2-2.5 MiB of each for 80-90 ms. Once: the turns
// that follow grow the heap again for what they need, and collecting their garbage is
// quiet-gc.ts's.

interface SettleOptions {
  /**
   * Quiet for this long after the warming or the last activity, nobody attached: settle (2 s, as
   * quiet-gc.ts waits). A prompt that comes meanwhile attaches first: the collection, tens of ms,
   * waits for its turn to end rather than delay it.
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
