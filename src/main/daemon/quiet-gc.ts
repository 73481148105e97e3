import { collectGarbage } from '../../workers/shared/gc.ts';

// What a daemon does with the garbage of the turns it ran (see workers/shared/gc.ts): when no
// turn runs, each of its long-lived threads — this one, the MCP worker, the API worker — is asked
// to collect its own:
// - every few turns ended (one-shot commands back to back never leave the daemon quiet), each
//   collects whatever it holds. Over 300 one-shot turns this keeps the daemon's RSS at 145-149
//   MiB; collecting only heaps that grew let it reach 153-158 (the engine's thread keeps more of
//   its young generation resident). About 90 ms of CPU over the three threads;
// - once the daemon has been quiet for a moment, each collects only if its heap grew enough to be
//   worth it: a status, a few `mcp call`s or a turn or two are not (collecting after each of
//   those would cost a daemon used now and then 20-30 ms of CPU a second for seconds after).

interface QuietGcOptions {
  /** Quiet for this long after activity: collect (2 s). */
  quietMs?: number;
  /** Turns ended since the last `always` collection that make one without waiting for quiet (16). */
  turnsPerCollection?: number;
  /** Collects this thread's garbage: `always`, or if grown (shared/gc.ts). */
  collectHere?: (always: boolean) => void;
}

export interface Collectable {
  readonly runningTurns: number;
  readonly mcp: { collectGarbage(always: boolean): void };
  readonly api: { collectGarbage(always: boolean): void };
}

/**
 * Call `activity(engine)` whenever clients or running turns change; `clear()` when the daemon
 * stops.
 */
export const collectWhenQuiet = ({
  quietMs = 2000,
  turnsPerCollection = 16,
  collectHere = collectGarbage,
}: QuietGcOptions = {}) => {
  let engine: Collectable | undefined;
  let timer: NodeJS.Timeout | undefined;
  let turns = 0;
  let wasRunning = false;
  const collect = (always: boolean): void => {
    clearTimeout(timer);
    const e = engine;
    if (!e || e.runningTurns > 0) return;
    if (always) turns = 0;
    collectHere(always);
    e.mcp.collectGarbage(always);
    e.api.collectGarbage(always);
  };
  return {
    activity: (e: Collectable): void => {
      engine = e;
      const running = e.runningTurns > 0;
      if (wasRunning && !running) turns++;
      wasRunning = running;
      clearTimeout(timer);
      if (running) return;
      if (turns >= turnsPerCollection) return collect(true);
      timer = setTimeout(() => collect(false), quietMs);
      timer.unref();
    },
    clear: (): void => clearTimeout(timer),
  };
};
