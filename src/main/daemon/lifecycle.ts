import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { NifflerError } from '../errors.ts';
import { isSameProcess, reapGroups } from '../../workers/shared/process-group.ts';
import { nifflerPaths, type NifflerPaths } from '../paths.ts';
import type { ConnectOptions } from './connect-options.ts';
import { connectSocket, type EngineClient } from './client.ts';
import { daemonTimeoutMs, isUnresponsive, notResponding } from './deadline.ts';
import { isNoDaemon } from './one-shot.ts';
import { readPidFile } from '../../workers/shared/pid-file.ts';
import { spawnDaemon, takeEarlyStart, type Started } from './spawn.ts';

/**
 * True while process `pid` runs. A zombie (exited, not yet reaped — some containers' init reaps
 * late) counts as gone.
 */
export const isAlive = (pid: number): boolean => isSameProcess(pid, null);

/**
 * Connects to the daemon of `root`, starting one when none answers (under a lock, so two
 * front-ends starting at once share one daemon). A socket or lock left by a dead daemon is
 * replaced; a daemon of another version is asked to exit and started anew. Returns `null` when
 * `start` is false and no daemon runs.
 */
export function connectDaemon(options: ConnectOptions & { start?: true }): Promise<EngineClient>;
export function connectDaemon(options: ConnectOptions): Promise<EngineClient | null>;
export async function connectDaemon(options: ConnectOptions): Promise<EngineClient | null> {
  const paths = nifflerPaths(options.root, options.env);
  const timeoutMs = daemonTimeoutMs(options.env);
  // The bin may have started this workspace's daemon already (see startDaemonEarly): once it
  // answers (or that failed), the loop below connects, or starts one as usual.
  const early = takeEarlyStart(options.root);
  if (early) {
    if (options.start !== false) options.onStarting?.();
    await early.catch(() => undefined);
  }
  // The longest way: a daemon of another version answers and leaves; the one we start finds it
  // still holding the lock while it stops; the next one starts; then we connect — four rounds.
  for (let attempt = 0; attempt < 4; attempt++) {
    const existing = await tryConnect(paths, timeoutMs);
    if (existing) {
      const hello = await existing.hello(options.client ?? 'cli').catch((error: unknown) => {
        existing.close();
        // A daemon that takes the connection and says nothing is stopped or stuck: starting
        // another would only find the first one's lock.
        if (isUnresponsive(error)) throw error;
        return null;
      });
      if (hello?.ok) return existing;
      existing.close();
      if (hello && !hello.ok) {
        await waitUntil(async () => (await tryConnect(paths, timeoutMs, true)) === null, 30_000);
        continue;
      }
    }
    if (options.start === false) return null;
    const started = await startDaemon(options);
    if (started !== 'ready') await waitForHolder(paths, started.holder, timeoutMs);
  }
  throw new NifflerError(
    'daemon-unreachable',
    `could not reach the niffler daemon for ${options.root}; see ${paths.daemonLog}, or run with --no-daemon`,
  );
}

/**
 * A daemon started for us found another one holding the workspace's lock (its socket was deleted,
 * say, and is being made again): waits until a daemon answers or the holder is gone. A holder that
 * stays and never answers is stopped or stuck.
 */
const waitForHolder = async (
  paths: NifflerPaths,
  holder: number | null,
  timeoutMs: number,
): Promise<void> => {
  const settled = await waitUntil(
    async () =>
      (holder !== null && !isAlive(holder)) || (await tryConnect(paths, timeoutMs, true)) !== null,
    timeoutMs,
  );
  // A holder that could not be named may have been on its way out: the caller tries again.
  if (!settled && holder !== null && isAlive(holder))
    throw notResponding(paths.pidFile, paths.socket, timeoutMs);
};

/**
 * Connects if a daemon listens; `null` when there is none (no socket, or a stale one). A daemon
 * whose backlog is full (EAGAIN) is not answering: that is its not-responding error.
 */
const tryConnect = async (
  paths: NifflerPaths,
  timeoutMs: number,
  closeAfter = false,
): Promise<EngineClient | null> => {
  try {
    const client = await connectSocket(paths.socket, {
      timeoutMs,
      error: () => notResponding(paths.pidFile, paths.socket, timeoutMs),
    });
    if (closeAfter) client.close();
    return client;
  } catch (error) {
    if (isNoDaemon(error)) return null;
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN')
      throw notResponding(paths.pidFile, paths.socket, timeoutMs);
    throw error;
  }
};

/** Checks until `check` says yes, backing off from 10 ms to 100 ms; false after `timeoutMs`. */
export const waitUntil = async (
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 10; Date.now() < deadline; wait = Math.min(wait * 2, 100)) {
    if (await check()) return true;
    await delay(wait);
  }
  return false;
};

/** Takes the start lock, or waits for whoever holds it to finish starting the daemon. */
export const startDaemon = async (options: ConnectOptions): Promise<Started> => {
  const paths = nifflerPaths(options.root, options.env);
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  const probeMs = daemonTimeoutMs(options.env);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    let fd: number;
    try {
      fd = openSync(paths.lock, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(paths.lock, 'utf8').trim() || '0', 10);
      if (holder && isAlive(holder)) {
        // Another front-end is starting it: wait for the socket to answer.
        const answered = async () => (await tryConnect(paths, probeMs, true)) !== null;
        if (
          await waitUntil(async () => (await answered()) || !isAlive(holder), deadline - Date.now())
        )
          return 'ready';
      } else {
        rmSync(paths.lock, { force: true });
      }
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if ((await tryConnect(paths, probeMs, true)) !== null) return 'ready';
      options.onStarting?.();
      return await spawnDaemon(options, deadline - Date.now());
    } finally {
      rmSync(paths.lock, { force: true });
    }
  }
  throw new NifflerError(
    'timeout',
    `the niffler daemon did not start within ${Math.round(timeoutMs / 1000)} s; see ${paths.daemonLog}`,
  );
};

/**
 * Ends the daemon of `paths` by force (`daemon stop --force`, `daemon restart`): SIGKILL to the pid
 * in its pid file — a stopped (SIGSTOP) process dies too — then its servers' process groups, as
 * the next daemon would reap them. Resolves with the pid it killed, or null when none ran.
 */
export const killDaemon = async (paths: NifflerPaths): Promise<number | null> => {
  const pid = readPidFile(paths.pidFile);
  if (pid === null) return null;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
  if (!(await waitUntil(() => !isAlive(pid), 10_000)))
    throw new NifflerError('timeout', `the daemon (pid ${pid}) did not die of SIGKILL within 10 s`);
  await reapGroups(paths.serversDir);
  return pid;
};
