import type { LoadedConfig } from '../extensions/workspace-config.ts';
import type { Config } from '../config/schema.ts';
import type { TaskRunner } from '../extensions/task-runner.ts';
import type { Logger } from '../log.ts';
import type { DaemonStatus, ParamsOf, RequestContext, ResultOf } from '../protocol.ts';
import type { SessionTable } from './session-table.ts';

type DaemonMethod = 'hello' | 'daemon/status' | 'daemon/stop';

type Handlers<M extends DaemonMethod> = {
  [K in M]: (params: ParamsOf<K>, context: RequestContext) => Promise<ResultOf<K>>;
};

/** What `hello` and the `daemon/*` requests need of the engine. */
interface DaemonView {
  version(): string;
  root(): string;
  /** The daemon's socket; null for an in-process engine. */
  socket(): string | null;
  startedAt(): number;
  logFile(): string;
  readonly sessions: SessionTable;
  clients(): number;
  /** The config as last read (no re-read), why it did not load, and the one in force. */
  lastLoaded(): LoadedConfig | null;
  configError(): string | null;
  config(): Config;
  tasks(): TaskRunner;
  log(): Logger;
  /** Asks the daemon to stop (`EngineOptions.onStopRequested`). */
  stop(reason: string): void;
}

/** The daemon's state as `niffler daemon status` shows it. */
function daemonStatus(view: DaemonView): DaemonStatus {
  const memory = process.memoryUsage();
  const logError = view.log().problem();
  return {
    pid: process.pid,
    version: view.version(),
    root: view.root(),
    socket: view.socket(),
    startedAt: view.startedAt(),
    uptimeMs: Date.now() - view.startedAt(),
    clients: view.clients(),
    runningTurns: view.sessions.running,
    sessionsInMemory: view.sessions.size,
    memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed },
    configFiles: view.lastLoaded()?.files ?? [],
    configError: view.configError(),
    idleMinutes: view.config().daemon.idleMinutes,
    logFile: view.logFile(),
    ...(logError ? { logError } : {}),
    schedules: view
      .tasks()
      .list()
      .filter((t) => t.schedule)
      .map((t) => ({
        task: t.name,
        schedule: t.schedule!,
        ...(t.next ? { next: t.next } : {}),
        ...(t.missed ? { missed: t.missed } : {}),
      })),
  };
}

/** `hello` (a front-end of another version restarts the daemon once idle), `daemon/status`, `daemon/stop`. */
export function daemonHandlers(view: DaemonView): Handlers<DaemonMethod> {
  return {
    hello: async (params) => {
      if (params.version !== view.version()) {
        view.log().info('front-end of another version: restarting when idle', {
          ours: view.version(),
          theirs: params.version,
        });
        void view.sessions.whenIdle().then(() => view.stop(`front-end version ${params.version}`));
        return { ok: false, reason: 'version-mismatch', version: view.version(), pid: process.pid };
      }
      return { ok: true, version: view.version(), pid: process.pid, root: view.root() };
    },
    'daemon/status': async () => daemonStatus(view),
    'daemon/stop': async () => {
      queueMicrotask(() => view.stop('niffler daemon stop'));
      return { stopping: true };
    },
  };
}
