import { collectGarbage } from '../../workers/shared/gc.ts';

// What a daemon does with the garbage of the turns it ran (see workers/shared/gc.ts): when no
// turn runs, each of its long-lived threads — this one, the MCP worker, the API worker — collects
// its own, once the daemon has been quiet for a moment or after every few turns of a busy stretch
// (one-shot commands back to back never leave it quiet). A few ms of a thread nobody waits for.

interface QuietGcOptions {
  /** Quiet for this long after activity: collect (2 s). */
  quietMs?: number;
  /** Turns ended since the last collection that make one without waiting for quiet (16). */
  turnsPerCollection?: number;
  /** Collects this thread's garbage (shared/gc.ts). */
  collectHere?: () => void;
}

export interface Collectable {
  readonly runningTurns: number;
  readonly mcp: { collectGarbage(): void };
  readonly api: { collectGarbage(): void };
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
  const collect = (): void => {
    clearTimeout(timer);
    const e = engine;
    if (!e || e.runningTurns > 0) return;
    turns = 0;
    collectHere();
    e.mcp.collectGarbage();
    e.api.collectGarbage();
  };
  return {
    activity: (e: Collectable): void => {
      engine = e;
      const running = e.runningTurns > 0;
      if (wasRunning && !running) turns++;
      wasRunning = running;
      clearTimeout(timer);
      if (running) return;
      if (turns >= turnsPerCollection) return collect();
      timer = setTimeout(collect, quietMs);
      timer.unref();
    },
    clear: (): void => clearTimeout(timer),
  };
};
