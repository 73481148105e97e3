import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { shortHash } from '../paths.ts';
import { readPidFile, writePidFile } from '../../workers/shared/pid-file.ts';

/** A daemon's claim on its workspace, held from start to exit. */
interface DaemonLock {
  /**
   * Gives the claim up: once a stopping daemon has closed its socket (a successor may start while
   * it ends its servers), and at exit; a killed process gives it up by dying. Safe to call twice.
   */
  release(): Promise<void>;
}

/** What trying for the lock came to: the lock, or who holds it (null when that is unknown). */
type LockAttempt = { ok: true; lock: DaemonLock } | { ok: false; holder: number | null };

/** How long the holder of the lock may take to say its pid. */
const PROBE_MS = 1_000;
/**
 * How long a lock whose holder cannot be named is tried again: a process killed a moment ago
 * holds it until the kernel has closed its files.
 */
const DYING_HOLDER_MS = 3_000;

/**
 * Takes the lifetime lock of the daemon whose socket is `socket`, and writes `pidFile`. On Linux
 * the lock is an abstract Unix socket named after the daemon's socket: the kernel frees it when
 * the process ends, however it ends (kill -9 too), so no stale lock is ever cleared and no two
 * processes can both hold it. The holder answers a connection to it with its pid, so a loser
 * learns who won. Elsewhere the pid file itself is the lock (created exclusively; stale once its
 * process is gone).
 */
export const acquireLock = async (socket: string, pidFile: string): Promise<LockAttempt> => {
  if (process.platform !== 'linux') return acquirePidFileLock(pidFile);
  const name = `\0niffler-${shortHash(socket, 16)}`;
  const server = net.createServer((connection) => {
    connection.on('error', () => {});
    connection.end(`${process.pid}\n`);
  });
  for (const deadline = Date.now() + DYING_HOLDER_MS; ;) {
    const taken = await new Promise<boolean>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        error.code === 'EADDRINUSE' ? resolve(false) : reject(error),
      );
      server.listen(name, () => resolve(true));
    });
    if (taken) break;
    server.removeAllListeners('error');
    const holder = (await probeHolder(name)) ?? readPidFile(pidFile);
    if (holder !== null || Date.now() > deadline) return { ok: false, holder };
    await delay(50);
  }
  // The lock never keeps the daemon alive by itself.
  server.unref();
  writePidFile(pidFile);
  let released: Promise<void> | undefined;
  return {
    ok: true,
    lock: {
      release: () =>
        (released ??= new Promise<void>((resolve) => {
          if (readPidFile(pidFile) === process.pid) rmSync(pidFile, { force: true });
          server.close(() => resolve());
        })),
    },
  };
};

/** The pid the holder of the abstract lock `name` gives; null if it does not say in time. */
const probeHolder = (name: string): Promise<number | null> =>
  new Promise((resolve) => {
    const connection = net.connect(name);
    let text = '';
    const done = (pid: number | null) => {
      clearTimeout(timer);
      connection.destroy();
      resolve(pid);
    };
    const timer = setTimeout(() => done(null), PROBE_MS);
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => (text += chunk));
    connection.on('end', () => done(Number.parseInt(text, 10) || null));
    connection.on('error', () => done(null));
  });

/** The lock where there are no abstract sockets: the pid file, created exclusively. */
const acquirePidFileLock = async (pidFile: string): Promise<LockAttempt> => {
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(pidFile, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readPidFile(pidFile);
      if (holder !== null) return { ok: false, holder };
      rmSync(pidFile, { force: true });
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return {
      ok: true,
      lock: {
        release: async () => {
          if (readPidFile(pidFile) === process.pid) rmSync(pidFile, { force: true });
        },
      },
    };
  }
  return { ok: false, holder: null };
};
