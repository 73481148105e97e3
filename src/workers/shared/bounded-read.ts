import { read, readSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { promisify } from 'node:util';
import { ConfinedError, type ConfinePolicy } from './confine.ts';
import { openConfinedFile } from './confined-open.ts';

// Bounded reads: the public reader for config, prompt and ignore files, and the pieces the file
// tools read with. Nothing here reads more than it was allowed, whatever the file claims to be.

const readAsync = promisify(read);
const CHUNK = 64 * 1024;

/** What `readBoundedFile` may read, and from where. */
export interface BoundedReadOptions {
  /** Bytes at most; a longer file is refused (`too-large`) without being read whole. */
  maxBytes: number;
  /** Directories the file must really be inside, symlinks resolved; anywhere when absent. */
  allowedRoots?: readonly string[];
  /** Directories it must not be inside even within `allowedRoots` (`$NIFFLER_HOME`). */
  excluded?: readonly string[];
  /** How messages name the file (default: the path as given). */
  shown?: string;
}

/** `bytes` for people: `512 B`, `3.2 KiB`, `200.0 MiB`. */
export const formatBytes = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Real paths of `dirs`; a missing one keeps its absolute lexical path. */
export const realDirs = (dirs: readonly string[]): string[] =>
  dirs.map((dir) => {
    try {
      return realpathSync(dir);
    } catch {
      return path.resolve(dir);
    }
  });

const policyOf = (options: BoundedReadOptions): ConfinePolicy => ({
  want: 'file',
  ...(options.allowedRoots ? { roots: realDirs(options.allowedRoots) } : {}),
  ...(options.excluded ? { excluded: realDirs(options.excluded) } : {}),
});

const tooLarge = (shown: string, size: string, maxBytes: number): ConfinedError =>
  new ConfinedError(
    'too-large',
    shown,
    `is ${size}, over the ${formatBytes(maxBytes)} this file may have; make it smaller, ` +
      'or check that it is the file you meant',
  );

/** Reads all of `fd` from its current offset, refusing past `maxBytes` (the size is not trusted). */
export const readFdSync = (fd: number, maxBytes: number, shown: string): Buffer => {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1 - total));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, n));
    total += n;
    if (total > maxBytes) throw tooLarge(shown, `more than ${formatBytes(maxBytes)}`, maxBytes);
  }
};

/** `readFdSync` without blocking the thread, from the start of the file. */
export const readFd = async (fd: number, maxBytes: number, shown: string): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1 - total));
    const { bytesRead } = await readAsync(fd, chunk, 0, chunk.length, total);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) throw tooLarge(shown, `more than ${formatBytes(maxBytes)}`, maxBytes);
  }
};

/**
 * Reads a whole regular file as UTF-8, bounded. Refuses — with a `ConfinedError` whose message
 * names the file, what it is and what to do — a FIFO, device, socket or directory (without
 * opening it), anything under /proc or /sys, a file over `maxBytes`, and, with `allowedRoots`, a
 * path whose symlinks lead outside them or into `excluded`. A missing file is `not-found`.
 */
export const readBoundedFileSync = (file: string, options: BoundedReadOptions): string => {
  const shown = options.shown ?? file;
  const opened = openConfinedFile(file, policyOf(options), { shown });
  try {
    if (opened.stats.size > options.maxBytes)
      throw tooLarge(shown, formatBytes(opened.stats.size), options.maxBytes);
    return readFdSync(opened.fd, options.maxBytes, shown).toString('utf8');
  } finally {
    opened.close();
  }
};

/** `readBoundedFileSync` with the reading itself off the thread's hot path. */
export const readBoundedFile = async (
  file: string,
  options: BoundedReadOptions,
): Promise<string> => {
  const shown = options.shown ?? file;
  const opened = openConfinedFile(file, policyOf(options), { shown });
  try {
    if (opened.stats.size > options.maxBytes)
      throw tooLarge(shown, formatBytes(opened.stats.size), options.maxBytes);
    return (await readFd(opened.fd, options.maxBytes, shown)).toString('utf8');
  } finally {
    opened.close();
  }
};

/** Up to `length` bytes of `fd` from `position`. */
export const readAt = async (fd: number, length: number, position: number): Promise<Buffer> => {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await readAsync(fd, buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
};

/** One line of a streamed file: 1-based number, text without `\n`, and whether it was cut. */
export interface Line {
  n: number;
  text: string;
  cut: boolean;
}

/**
 * The lines of `fd` from the start, read in 64 KiB chunks: memory holds one chunk and one line
 * of at most `maxLineChars` characters (the rest of a longer line is skipped, `cut` set).
 * Stops early when the caller stops iterating.
 */
export async function* streamLines(fd: number, maxLineChars: number): AsyncGenerator<Line> {
  const decoder = new StringDecoder('utf8');
  const chunk = Buffer.allocUnsafe(CHUNK);
  let position = 0;
  let n = 0;
  let pending = '';
  let cut = false;
  const take = (part: string) => {
    if (cut) return;
    const room = maxLineChars - pending.length;
    if (part.length > room) {
      pending += part.slice(0, room);
      cut = true;
    } else pending += part;
  };
  for (;;) {
    const { bytesRead } = await readAsync(fd, chunk, 0, CHUNK, position);
    position += bytesRead;
    const text = bytesRead === 0 ? decoder.end() : decoder.write(chunk.subarray(0, bytesRead));
    let start = 0;
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', start)) {
      take(text.slice(start, at));
      yield { n: ++n, text: pending, cut };
      pending = '';
      cut = false;
      start = at + 1;
    }
    take(text.slice(start));
    if (bytesRead === 0) {
      if (pending !== '' || cut) yield { n: n + 1, text: pending, cut };
      return;
    }
  }
}
