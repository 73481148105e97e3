import { chmodSync, mkdirSync } from 'node:fs';
import type net from 'node:net';
import { createMessageConnection, SocketMessageReader } from 'vscode-jsonrpc/node';
import { SocketFrameWriter } from './socket-writer.ts';
import { reapGroups } from '../../workers/shared/process-group.ts';
import { pruneOutputs } from '../../workers/shared/prune.ts';
import { secretsKeeper } from '../config/redact.ts';
import type { Config } from '../config/schema.ts';
import type { EngineOptions } from '../engine/boot.ts';
import type { Engine } from '../engine/engine.ts';
import { createLogger, parseLogLevel, type Logger } from '../log.ts';
import { nifflerPaths, type Env, type NifflerPaths } from '../paths.ts';
import type { BootedWorker } from '../threads/entry.ts';
import { McpHost } from '../threads/mcp.ts';
import type { BootedMcpWorker } from '../threads/mcp-types.ts';
import { serveConnection } from './connection.ts';
import { acquireLock } from './lock.ts';
import { stopWhenRootGone } from './root-gone.ts';
import { DaemonSocket } from './socket.ts';
import { collectWhenQuiet } from './quiet-gc.ts';
import { settleOnceWarm } from './settle.ts';
import { releaseApiWhenUnused } from './api-idle.ts';
import { mark } from '../../workers/shared/timeline.ts';

export interface DaemonOptions {
  root: string;
  env?: Env;
  /** Called once the socket accepts connections. */
  onListening?: () => void;
  /** Called once, when the daemon has warmed (prewarm.ts) after its first answers. */
  onWarmed?: () => void;
  /**
   * Called instead when another daemon of this workspace holds the lock (pid, null if unknown):
   * this one then returns at once, having started nothing.
   */
  onBusy?: (holder: number | null) => void;
  /** Epoch ms the daemon process started (`mcp.startupWait` is counted from it); default now. */
  startedAt?: number;
  /** Started for a prompt (`--for-prompt`): the API worker starts at once (see EngineOptions). */
  promptSoon?: boolean;
  /** The workers daemon/body.ts started before it loaded this module (early-workers.ts). */
  booted?: { mcp: BootedMcpWorker; api?: BootedWorker };
}

/**
 * Runs the per-repository daemon: the engine behind a Unix socket (dir 0700, socket 0600) that
 * exits after `daemon.idleMinutes` with no client and no running turn, on `daemon stop`, on
 * SIGTERM/SIGINT, when a front-end of another version asks, or when its repository is gone. One
 * per workspace: it holds a lock for its whole life, and a second one returns at once
 * (`onBusy`). Resolves when it has stopped.
 */
export const runDaemon = async (options: DaemonOptions): Promise<void> => {
  const env = options.env ?? process.env;
  const paths = nifflerPaths(options.root, env);
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  chmodSync(paths.runDir, 0o700);
  // The config's expanded secrets, and those of every config before it, known from the moment
  // the engine loads each one.
  let secrets: string[] = [];
  const log: Logger = createLogger(
    {
      file: paths.daemonLog,
      level: parseLogLevel(env['NIFFLER_LOG']) ?? 'info',
      secrets: () => secrets,
    },
    { pid: process.pid },
  );
  const claim = await acquireLock(paths.socket, paths.pidFile);
  if (!claim.ok) {
    log.info('another daemon runs for this workspace; exiting', { holder: claim.holder });
    options.onBusy?.(claim.holder);
    return;
  }
  try {
    const keeper = secretsKeeper(env);
    // The servers are what a cold start waits for: the MCP worker loads its code while this thread
    // loads the engine's and reads the config.
    const mcpWorker = options.booted?.mcp ?? McpHost.boot();
    await serve(options, env, paths, log, {
      onConfig: (config) => (secrets = keeper(config)),
      release: () => void claim.lock.release(),
      mcpWorker,
      ...(options.booted?.api ? { apiWorker: options.booted.api } : {}),
    });
  } finally {
    await claim.lock.release();
  }
};

/** How long an unused daemon keeps its API worker: 60 s, or `NIFFLER_API_IDLE_MS` (tests, bench). */
const apiIdleMs = (env: Env): number => {
  const ms = env['NIFFLER_API_IDLE_MS'] ? Number(env['NIFFLER_API_IDLE_MS']) : Number.NaN;
  return Number.isFinite(ms) && ms >= 0 ? ms : 60_000;
};

/**
 * What a quiet daemon does, told of every change of clients and turns: it stops when idle for
 * `daemon.idleMinutes`, gives back what its warming grew once warmed (settle.ts), collects the
 * garbage of the turns it ran (quiet-gc.ts), and ends its API worker when nobody has used it for
 * a while (api-idle.ts).
 */
const whenQuiet = (env: Env, log: Logger, stop: (reason: string) => void) => {
  const idle = idleStop(stop);
  const settle = settleOnceWarm({ log: (msg) => log.info(msg) });
  const garbage = collectWhenQuiet();
  const unused = releaseApiWhenUnused(apiIdleMs(env));
  return {
    activity: (engine: Engine): void => {
      idle.arm(engine);
      settle.activity(engine);
      garbage.activity(engine);
      unused.activity(engine);
    },
    armIdle: idle.arm,
    warmed: settle.warmed,
    clears: [idle.clear, settle.clear, garbage.clear, unused.clear],
  };
};

/** How often the saved outputs are pruned (and once at start). */
const PRUNE_EVERY_MS = 60 * 60_000;

/** Prunes the workspace's saved outputs now and every hour (`tools.output.maxAgeDays/maxTotalMB`). */
const pruneOutputsNowAndThen = (engine: Engine, paths: NifflerPaths, log: Logger): (() => void) => {
  const prune = () => {
    const { maxAgeDays, maxTotalMB } = engine.config.tools.output;
    pruneOutputs(paths.outputsDir, {
      maxAgeMs: maxAgeDays * 24 * 3_600_000,
      maxBytes: maxTotalMB * 1024 * 1024,
    }).then(
      ({ removed, bytes }) => {
        if (removed > 0) log.info('pruned saved outputs', { removed, bytes });
      },
      (error: unknown) => log.warn('pruning saved outputs failed', { error: String(error) }),
    );
  };
  prune();
  const timer = setInterval(prune, PRUNE_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
};

/** What a killed predecessor left running: its servers' process groups, ended before ours start. */
const reapPredecessor = async (paths: NifflerPaths, log: Logger): Promise<void> => {
  const reaped = await reapGroups(paths.serversDir);
  if (reaped.length > 0)
    log.warn('ended the servers of a daemon that was killed', {
      servers: reaped.map((r) => `${r.label} (pid ${r.pid})`),
    });
};

interface ServeHooks {
  onConfig: (config: Config) => void;
  /** Gives the workspace's lock up: called once the stopping daemon has closed its socket. */
  release: () => void;
  mcpWorker: BootedMcpWorker;
  apiWorker?: BootedWorker;
}

/**
 * The engine of this daemon. Its code loads only now, after the MCP worker was started and given
 * its servers (boot.ts): they spawn while this thread loads it.
 */
const startEngine = async (
  options: DaemonOptions,
  env: Env,
  paths: NifflerPaths,
  log: Logger,
  hooks: ServeHooks & {
    stop: (reason: string) => void;
    onActivity: () => void;
    /** The servers a killed predecessor left, ended (reapPredecessor): ours spawn after. */
    reaped: Promise<void>;
  },
): Promise<Engine> => {
  const engineOptions: Omit<EngineOptions, 'gateway'> = {
    root: options.root,
    env,
    log,
    socket: paths.socket,
    // A short grace lets the reply that asked for the stop reach its client first.
    onStopRequested: (reason) => void setTimeout(() => hooks.stop(reason), 50),
    onActivity: hooks.onActivity,
    onConfig: (loaded) => hooks.onConfig(loaded.config),
    mcpWorker: hooks.mcpWorker,
    ...(hooks.apiWorker ? { apiWorker: hooks.apiWorker } : {}),
    ...(options.startedAt ? { startedAt: options.startedAt } : {}),
    ...(options.promptSoon ? { promptSoon: true } : {}),
  };
  // The config first, and the MCP worker given its servers: they spawn while the rest loads (the
  // gateway's link among it, whose own code loads on its first consumer).
  const [{ beginEngine }] = await Promise.all([import('../engine/boot.ts'), hooks.reaped]);
  const start = beginEngine(engineOptions);
  const [{ Engine }, { GatewayLink }] = await Promise.all([
    import('../engine/engine.ts'),
    import('../gateway/link.ts'),
  ]);
  return Engine.create({ ...engineOptions, gateway: (deps) => new GatewayLink(deps) }, start);
};

const serve = async (
  options: DaemonOptions,
  env: Env,
  paths: NifflerPaths,
  log: Logger,
  hooks: ServeHooks,
): Promise<void> => {
  log.info('daemon starting', { root: options.root, socket: paths.socket });
  // While the engine's first code loads: the servers of ours spawn only once it is done.
  const reaped = reapPredecessor(paths, log).then(() => mark('predecessor reaped'));
  let stopping: Promise<void> | undefined;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const sockets = new Set<net.Socket>();
  // Undone first thing on stop: the idle timers, the pruning, the socket (as far as they exist).
  const quiet = whenQuiet(env, log, (reason) => void stop(reason));
  const cleanups: (() => void)[] = [...quiet.clears];

  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      log.info('daemon stopping', { reason });
      for (const undo of cleanups.splice(0)) undo();
      for (const socket of sockets) socket.end();
      await engine
        .close()
        .catch((error: unknown) => log.error('engine close failed', { error: String(error) }));
      for (const socket of sockets) socket.destroy();
      log.info('daemon stopped');
      resolveDone();
    })();
    return stopping;
  };

  const engine: Engine = await startEngine(options, env, paths, log, {
    ...hooks,
    stop: (reason) => void stop(reason),
    onActivity: () => quiet.activity(engine),
    reaped,
  });
  cleanups.push(stopWhenRootGone(options.root, (reason) => void stop(reason)));
  const socket = await listen(paths, log, acceptor(engine, log, sockets), stop);
  // Stopping, it serves no more: a successor may take the workspace while its servers are ended.
  const closeSocket = () => {
    socket.close();
    hooks.release();
  };
  if (stopping) closeSocket();
  else cleanups.push(closeSocket);
  log.info('daemon listening', { socket: paths.socket });
  mark('daemon listening');
  // Once it answers: the first pruning reads the outputs directory.
  if (!stopping) cleanups.push(pruneOutputsNowAndThen(engine, paths, log));
  quiet.armIdle(engine);
  engine.warmWhenIdle(() => {
    quiet.warmed(engine);
    options.onWarmed?.();
  });
  options.onListening?.();
  await untilSignalOr(done, stop);
};

/** Stops the daemon (`stop`) after `daemon.idleMinutes` with no client and no running turn. */
const idleStop = (stop: (reason: string) => void) => {
  let timer: NodeJS.Timeout | undefined;
  return {
    arm: (engine: Engine): void => {
      clearTimeout(timer);
      const minutes = engine.loaded?.config.daemon.idleMinutes ?? 30;
      // A scheduled task keeps the daemon up: it runs only while the daemon does.
      if (
        minutes <= 0 ||
        engine.clients > 0 ||
        engine.runningTurns > 0 ||
        engine.scheduledTasks > 0
      )
        return;
      timer = setTimeout(() => stop(`idle for ${minutes} min`), minutes * 60_000);
    },
    clear: (): void => clearTimeout(timer),
  };
};

/** Listens on the workspace's socket, kept in place (see DaemonSocket); `stop` if it cannot be. */
const listen = (
  paths: NifflerPaths,
  log: Logger,
  accept: (socket: net.Socket) => void,
  stop: (reason: string) => Promise<void>,
): Promise<DaemonSocket> =>
  DaemonSocket.listen(paths.socket, accept, {
    recreated: () => log.warn('the socket was deleted; made it again', { socket: paths.socket }),
    lost: (why) => {
      log.error(`exiting: ${why}`);
      void stop(why);
    },
  });

/** Serves the engine on each connection to the socket; `sockets` tracks them for the stop. */
const acceptor =
  (engine: Engine, log: Logger, sockets: Set<net.Socket>) =>
  (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', (error) => log.debug('client socket error', { error: error.message }));
    const connection = createMessageConnection(
      new SocketMessageReader(socket),
      new SocketFrameWriter(socket),
    );
    connection.onError(([error]) => log.debug('client connection error', { error: error.message }));
    serveConnection(connection, engine);
  };

/** Waits for `done`, stopping on SIGTERM, SIGINT or SIGHUP meanwhile. */
const untilSignalOr = async (
  done: Promise<void>,
  stop: (reason: string) => Promise<void>,
): Promise<void> => {
  const onSignal = (signal: NodeJS.Signals) => void stop(signal);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  process.once('SIGHUP', onSignal);
  await done;
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  process.off('SIGHUP', onSignal);
};
