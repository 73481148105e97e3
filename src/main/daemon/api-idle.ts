// The API worker of a daemon nobody uses (see ApiHost.release): after a minute with no client
// attached and no turn running, it is ended — the daemon's largest thread it can do without
// (`bench/daemon-soak.bench.ts` measures the idle RSS). A session that opens warms it again
// (ApiHost.rewarm), while its front-end sends the prompt; a one-shot prompt after a long quiet
// pays for the worker's start, a busy daemon never does.

interface ApiUser {
  readonly clients: number;
  readonly runningTurns: number;
  readonly api: { release(): boolean };
}

/** Call `activity(engine)` whenever clients or running turns change; `clear()` at the stop. */
export const releaseApiWhenUnused = (afterMs = 60_000) => {
  let timer: NodeJS.Timeout | undefined;
  return {
    activity: (engine: ApiUser): void => {
      clearTimeout(timer);
      if (engine.clients > 0 || engine.runningTurns > 0) return;
      timer = setTimeout(() => {
        if (engine.clients === 0 && engine.runningTurns === 0) engine.api.release();
      }, afterMs);
      timer.unref();
    },
    clear: (): void => clearTimeout(timer),
  };
};
