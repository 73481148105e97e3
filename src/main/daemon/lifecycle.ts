import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { NifflerError } from '../errors.ts';
import { nifflerPaths, type Env } from '../paths.ts';
import { distFile, isSourceRun } from '../threads/entry.ts';
import { connectSocket, type EngineClient } from './client.ts';
import { isNoDaemon } from './one-shot.ts';

/** The daemon entry: `dist/daemon.js` in a build, the TypeScript source (via tsx) in dev and tests. */
const daemonCommand = (): { file: string; execArgv: string[] } =>
  isSourceRun()
    ? { file: fileURLToPath(new URL('./main.ts', import.meta.url)), execArgv: ['--import', 'tsx'] }
    : { file: fileURLToPath(distFile('daemon.js')), execArgv: [] };

/**
 * True while process `pid` runs. A zombie (exited, not yet reaped — some containers' init reaps
 * late) counts as gone.
 */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

export interface ConnectOptions {
  root: string;
  env?: Env;
  /** Start a daemon when none answers (default true). */
  start?: boolean;
  /** Shown in the daemon's log: which command connected. */
  client?: string;
  /** Told when a daemon is being started (for a progress line). */
  onStarting?: () => void;
  /** How long to wait for a daemon to start, in ms. */
  startTimeoutMs?: number;
}

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
  const client = options.client ?? 'cli';
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await tryConnect(paths.socket);
    if (existing) {
      const hello = await existing.hello(client).catch(() => null);
      if (hello?.ok) return existing;
      existing.close();
      if (hello && !hello.ok) {
        await waitUntil(async () => (await tryConnect(paths.socket, true)) === null, 30_000);
        continue;
      }
    }
    if (options.start === false) return null;
    await startDaemon(options);
  }
  throw new NifflerError(
    'daemon-unreachable',
    `could not reach the niffler daemon for ${options.root}; see ${paths.daemonLog}, or run with --no-daemon`,
  );
}

/** Connects if a daemon answers; `null` when there is none (no socket, or a stale one). */
const tryConnect = async (socket: string, closeAfter = false): Promise<EngineClient | null> => {
  try {
    const client = await connectSocket(socket);
    if (closeAfter) client.close();
    return client;
  } catch (error) {
    if (isNoDaemon(error)) return null;
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
const startDaemon = async (options: ConnectOptions): Promise<void> => {
  const paths = nifflerPaths(options.root, options.env);
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  const timeoutMs = options.startTimeoutMs ?? 20_000;
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
        if (
          await waitUntil(
            async () => (await tryConnect(paths.socket, true)) !== null || !isAlive(holder),
            deadline - Date.now(),
          )
        )
          return;
      } else {
        rmSync(paths.lock, { force: true });
      }
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if ((await tryConnect(paths.socket, true)) !== null) return;
      options.onStarting?.();
      await spawnDaemon(options, deadline - Date.now());
      return;
    } finally {
      rmSync(paths.lock, { force: true });
    }
  }
  throw new NifflerError(
    'timeout',
    `the niffler daemon did not start within ${Math.round(timeoutMs / 1000)} s; see ${paths.daemonLog}`,
  );
};

const spawnDaemon = async (options: ConnectOptions, timeoutMs: number): Promise<void> => {
  // Needed only when no daemon runs: kept off the warm path (~3 ms to load).
  const { spawn } = await import('node:child_process');
  const paths = nifflerPaths(options.root, options.env);
  mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 });
  const stderrFile = path.join(paths.logsDir, `daemon-${paths.key}.stderr.log`);
  const stderr = openSync(stderrFile, 'a', 0o600);
  const { file, execArgv } = daemonCommand();
  const child = spawn(process.execPath, [...execArgv, file, '--root', options.root], {
    cwd: options.root,
    env: { ...(options.env ?? process.env) },
    detached: true,
    stdio: ['ignore', 'pipe', stderr],
  });
  closeSync(stderr);
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(`did not answer within ${Math.round(timeoutMs / 1000)} s`),
      timeoutMs,
    );
    const finish = () => {
      clearTimeout(timer);
      child.stdout?.destroy();
      child.unref();
    };
    const fail = (why: string) => {
      finish();
      reject(
        new NifflerError(
          'daemon-unreachable',
          `the niffler daemon ${why}; see ${stderrFile} and ${paths.daemonLog}`,
        ),
      );
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        finish();
        resolve();
      }
    });
    child.once('exit', (code, signal) => fail(`exited at start (${signal ?? `code ${code}`})`));
    child.once('error', (error) => fail(`could not be started: ${error.message}`));
  });
};
