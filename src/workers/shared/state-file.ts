import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { writeAtomicSync } from './atomic.ts';

// niffler's own small state files under $NIFFLER_HOME (trust store, approvals): read without
// following a symlink, only when they are regular files of ours that nobody else may write, and
// bounded; written whole (temp file, fsync, rename) under a lock, so two processes never lose
// each other's write.

/** What reading a state file found: its text, nothing, or why it cannot be relied on. */
type StateRead =
  { kind: 'text'; text: string } | { kind: 'missing' } | { kind: 'refused'; why: string };

const MAX_STATE_BYTES = 4 * 1024 * 1024;

const describeType = (mode: number): string =>
  (mode & constants.S_IFMT) === constants.S_IFDIR
    ? 'a directory'
    : (mode & constants.S_IFMT) === constants.S_IFIFO
      ? 'a FIFO'
      : 'not a regular file';

/** Reads `file` as a private state file; see `StateRead`. Never throws. */
export const readStateFile = (
  file: string,
  maxBytes = MAX_STATE_BYTES,
  /** A secret (a token): refused when group or others may read it too, as the descriptor shows. */
  secret = false,
): StateRead => {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'refused', why: 'it is a symlink' };
    return { kind: 'refused', why: `it cannot be read (${code ?? (error as Error).message})` };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { kind: 'refused', why: `it is ${describeType(stats.mode)}` };
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid)
      return { kind: 'refused', why: `it belongs to uid ${stats.uid}, not to you (uid ${uid})` };
    if (stats.mode & 0o022)
      return { kind: 'refused', why: 'others may write it (group- or world-writable)' };
    if (secret && stats.mode & 0o077) return { kind: 'refused', why: 'others may read it' };
    if (stats.size > maxBytes) return { kind: 'refused', why: `it is over ${maxBytes} bytes` };
    const buffer = Buffer.alloc(stats.size);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return { kind: 'text', text: buffer.subarray(0, read).toString('utf8') };
  } finally {
    closeSync(fd);
  }
};

/** Writes `text` to `file` whole (0600; see atomic.ts), making its directory (0700) when missing. */
export const writeStateFile = (file: string, text: string): void => {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeAtomicSync(file, text, 0o600);
};

const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

const holderOf = (lock: string): number | undefined => {
  const read = readStateFile(lock, 64);
  const pid = read.kind === 'text' ? Number.parseInt(read.text, 10) : Number.NaN;
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
};

const ageMs = (file: string): number => {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return 0;
  }
};

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Runs `fn` holding `${file}.lock` (created exclusively, holding our pid). A lock whose holder
 * is gone is taken over; one held longer than `timeoutMs` by a live process is an error naming
 * it. Synchronous: the sections it guards are a read and a write of a small file.
 */
export const withStateLock = <T>(file: string, fn: () => T, timeoutMs = 10_000): T => {
  const lock = `${file}.lock`;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + timeoutMs;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = holderOf(lock);
      // An empty lock is one being taken right now, unless it has been empty for a while.
      const stale = holder === undefined ? ageMs(lock) > 2000 : !isRunning(holder);
      if (stale) {
        rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(
          `${lock} is held by process ${holder ?? 'unknown'}; wait for it to finish, or remove the file if no niffler runs`,
          { cause: error },
        );
      sleepSync(wait);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
};
