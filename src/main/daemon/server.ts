import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import {
  createMessageConnection,
  SocketMessageReader,
  SocketMessageWriter,
} from 'vscode-jsonrpc/node';
import { secretsKeeper } from '../config/redact.ts';
import { Engine } from '../engine/engine.ts';
import { createLogger, parseLogLevel, type Logger } from '../log.ts';
import { nifflerPaths, type Env } from '../paths.ts';
import { serveConnection } from './connection.ts';

export interface DaemonOptions {
  root: string;
  env?: Env;
  /** Called once the socket accepts connections. */
  onListening?: () => void;
}

/**
 * Runs the per-repository daemon: the engine behind a Unix socket (dir 0700, socket 0600) that
 * exits after `daemon.idleMinutes` with no client and no running turn, on `daemon stop`, on
 * SIGTERM/SIGINT, or when a front-end of another version asks. Resolves when it has stopped.
 */
export const runDaemon = async (options: DaemonOptions): Promise<void> => {
  const env = options.env ?? process.env;
  const paths = nifflerPaths(options.root, env);
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  chmodSync(paths.runDir, 0o700);
  // The config's expanded secrets, and those of every config before it, known from the moment
  // the engine loads each one.
  const keeper = secretsKeeper(env);
  let secrets: string[] = [];
  const log: Logger = createLogger(
    {
      file: paths.daemonLog,
      level: parseLogLevel(env['NIFFLER_LOG']) ?? 'info',
      secrets: () => secrets,
    },
    { pid: process.pid },
  );
  log.info('daemon starting', { root: options.root, socket: paths.socket });

  let stopping: Promise<void> | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      log.info('daemon stopping', { reason });
      clearTimeout(idleTimer);
      server.close();
      for (const socket of sockets) socket.end();
      await engine
        .close()
        .catch((error: unknown) => log.error('engine close failed', { error: String(error) }));
      rmSync(paths.socket, { force: true });
      for (const socket of sockets) socket.destroy();
      log.info('daemon stopped');
      resolveDone();
    })();
    return stopping;
  };

  const armIdleTimer = () => {
    clearTimeout(idleTimer);
    const minutes = engine.loaded?.config.daemon.idleMinutes ?? 30;
    if (minutes <= 0 || engine.clients > 0 || engine.runningTurns > 0) return;
    idleTimer = setTimeout(() => void stop(`idle for ${minutes} min`), minutes * 60_000);
  };

  const engine = await Engine.create({
    root: options.root,
    env,
    log,
    socket: paths.socket,
    // A short grace lets the reply that asked for the stop reach its client first.
    onStopRequested: (reason) => void setTimeout(() => void stop(reason), 50),
    onActivity: () => armIdleTimer(),
    onConfig: (loaded) => (secrets = keeper(loaded.config)),
  });

  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', (error) => log.debug('client socket error', { error: error.message }));
    const connection = createMessageConnection(
      new SocketMessageReader(socket),
      new SocketMessageWriter(socket),
    );
    connection.onError(([error]) => log.debug('client connection error', { error: error.message }));
    serveConnection(connection, engine);
  });
  // A socket left by a dead daemon goes: this daemon was started under the start lock, and a
  // live daemon would have answered the front-end that started it.
  rmSync(paths.socket, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(paths.socket, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(paths.socket, 0o600);
  log.info('daemon listening', { socket: paths.socket });
  armIdleTimer();
  options.onListening?.();

  const onSignal = (signal: NodeJS.Signals) => void stop(signal);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  process.once('SIGHUP', onSignal);
  await done;
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  process.off('SIGHUP', onSignal);
};
