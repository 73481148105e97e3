import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NifflerError } from '../errors.ts';
import { nifflerPaths, type Env } from '../paths.ts';
import { mark } from '../../workers/shared/timeline.ts';

// Starting a daemon: its command and environment, the spawn, and the wait for its first word. The
// front-end's bin (cli.ts) loads this too, to start a daemon for a prompt before it has loaded
// the rest of the front-end (see `startDaemonEarly`): it stays light.

/**
 * glibc's malloc gives each thread that allocates its own arena, each holding on to what it
 * freed: with five threads and their helpers that is several MiB at a turn's peak. Two arenas
 * are plenty for a process that mostly waits. Set only for the daemon (and only where the user
 * has not chosen): `NIFFLER_DAEMON_ARENA` tells it to take both out of its environment again
 * (daemon/main.ts), so its tools and servers start with the user's.
 */
const daemonEnv = (env: Env): Env =>
  env['MALLOC_ARENA_MAX'] === undefined
    ? { ...env, MALLOC_ARENA_MAX: '2', NIFFLER_DAEMON_ARENA: '1' }
    : { ...env };

/**
 * The daemon entry: `dist/daemon.cjs` in a build, the TypeScript source in dev and tests (through
 * tsx, named by its resolved path as for the workers: a run from source works from any directory).
 */
const daemonCommand = async (): Promise<{ file: string; execArgv: string[] }> => {
  // Only when a daemon is started: the bin loads this module at every start, and the module of
  // the workers' entries loads node:worker_threads (25 internal modules).
  const { distFile, isSourceRun, workerExecArgv } = await import('../threads/entry.ts');
  return isSourceRun()
    ? { file: fileURLToPath(new URL('./main.ts', import.meta.url)), execArgv: workerExecArgv() }
    : { file: fileURLToPath(distFile('daemon.cjs')), execArgv: [] };
};

/** What starting a daemon came to: it runs, or another daemon holds the workspace's lock. */
export type Started = 'ready' | { holder: number | null };

/** Spawns the daemon detached; resolves when it says `ready` (or `busy PID`: another runs). */
export const spawnDaemon = async (
  options: { root: string; env?: Env; forPrompt?: boolean },
  timeoutMs: number,
): Promise<Started> => {
  // Needed only when no daemon runs: kept off the warm path (~3 ms to load).
  const { spawn } = await import('node:child_process');
  const paths = nifflerPaths(options.root, options.env);
  mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 });
  const stderrFile = path.join(paths.logsDir, `daemon-${paths.key}.stderr.log`);
  const stderr = openSync(stderrFile, 'a', 0o600);
  const { file, execArgv } = await daemonCommand();
  const args = [...execArgv, file, '--root', options.root];
  if (options.forPrompt) args.push('--for-prompt');
  const child = spawn(process.execPath, args, {
    cwd: options.root,
    env: daemonEnv(options.env ?? process.env),
    detached: true,
    stdio: ['ignore', 'pipe', stderr],
  });
  closeSync(stderr);
  mark('daemon spawned');
  return new Promise<Started>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(`did not answer within ${Math.round(timeoutMs / 1000)} s`),
      timeoutMs,
    );
    const settle = (started: Started) => {
      clearTimeout(timer);
      child.stdout?.destroy();
      child.removeAllListeners('close');
      child.unref();
      resolve(started);
    };
    const fail = (why: string) => {
      clearTimeout(timer);
      child.stdout?.destroy();
      child.unref();
      reject(
        new NifflerError(
          'daemon-unreachable',
          `the niffler daemon ${why}; see ${stderrFile} and ${paths.daemonLog}`,
        ),
      );
    };
    let said = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      const busy = /^busy (\d+|\?)$/m.exec(said);
      if (busy) settle({ holder: busy[1] === '?' ? null : Number(busy[1]) });
      else if (/^ready$/m.test(said)) {
        mark('daemon said ready');
        settle('ready');
      }
    });
    // 'close', not 'exit': by then everything it said on stdout has been read.
    child.once('close', (code, signal) => fail(`exited at start (${signal ?? `code ${code}`})`));
    child.once('error', (error) => fail(`could not be started: ${error.message}`));
  });
};

/** Where the bin leaves a start it began, for the front-end it loads next (another bundle). */
const EARLY = Symbol.for('niffler.daemon-started-early');

interface EarlyStart {
  root: string;
  started: Promise<Started>;
}

/**
 * Starts the daemon of `root` at once when none seems to run (no socket): the bin calls this for a
 * prompt or the interactive session, so the daemon starts while the front-end loads. It takes the
 * start lock as `connectDaemon` does (and gives it back once the daemon has answered), and leaves
 * the start for `connectDaemon` to take (`takeEarlyStart`). Anything unusual (a socket, the lock
 * held, an error) leaves it all to `connectDaemon`.
 */
export const startDaemonEarly = (root: string, env: Env = process.env): void => {
  try {
    const paths = nifflerPaths(root, env);
    if (existsSync(paths.socket)) return;
    mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
    const fd = openSync(paths.lock, 'wx', 0o600);
    writeSync(fd, String(process.pid));
    closeSync(fd);
    const started = spawnDaemon({ root, env, forPrompt: true }, 20_000).finally(() =>
      rmSync(paths.lock, { force: true }),
    );
    started.catch(() => undefined); // connectDaemon tries again, and reports
    (globalThis as Record<symbol, EarlyStart>)[EARLY] = { root, started };
  } catch {
    // The lock is taken, or the home not writable: the normal start will say what is wrong.
  }
};

/** Whether `startDaemonEarly` began a start for `root` that no one has taken yet. */
export const startedEarly = (root: string): boolean =>
  (globalThis as Record<symbol, EarlyStart | undefined>)[EARLY]?.root === root;

/** The start `startDaemonEarly` began for `root`, once (undefined when none was). */
export const takeEarlyStart = (root: string): Promise<Started> | undefined => {
  const holder = globalThis as Record<symbol, EarlyStart | undefined>;
  const early = holder[EARLY];
  if (!early || early.root !== root) return undefined;
  holder[EARLY] = undefined;
  return early.started;
};
