import { read, readSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfinedError, type ConfinePolicy } from './confine.ts';
import { openConfinedFile } from './confined-open.ts';

// Bounded reads: the public reader for config, prompt and ignore files, and the pieces the file
// tools read with. Nothing here reads more than it was allowed, whatever the file claims to be.

const readAsync = promisify(read);
const CHUNK = 64 * 1024;

/** What `readBoundedFile` may read, and from where. */
interface BoundedReadOptions {
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
interface Line {
  n: number;
  text: string;
  cut: boolean;
}

/** The bytes of the line being read: pieces up to a bound, and whether more were dropped. */
class LineBytes {
  #parts: Buffer[] = [];
  #size = 0;
  cut = false;
  constructor(private readonly maxBytes: number) {}

  /** Keeps `piece` (copied when `copy`: the chunk it lives in is read into again). */
  add(piece: Buffer, copy: boolean): void {
    const room = this.maxBytes - this.#size;
    if (piece.length > room) this.cut = true;
    const kept = piece.subarray(0, Math.max(0, room));
    if (kept.length === 0) return;
    this.#parts.push(copy ? Buffer.from(kept) : kept);
    this.#size += kept.length;
  }

  get isEmpty(): boolean {
    return this.#size === 0 && !this.cut;
  }

  /** The line as text, at most `maxChars` characters; and starts the next one. */
  take(n: number, maxChars: number): Line {
    const text = Buffer.concat(this.#parts, this.#size).toString('utf8');
    const line = { n, text: text.slice(0, maxChars), cut: this.cut || text.length > maxChars };
    this.#parts = [];
    this.#size = 0;
    this.cut = false;
    return line;
  }
}

/**
 * The lines of `fd` after the first `skip`, read in 64 KiB chunks. Skipped lines are only counted
 * (never decoded); a kept line holds at most `maxLineChars` characters (the rest is dropped and
 * `cut` set). Memory holds one chunk and one line, whatever the file. Stops early when the caller
 * stops iterating.
 */
export async function* streamLines(
  fd: number,
  maxLineChars: number,
  skip = 0,
): AsyncGenerator<Line> {
  const chunk = Buffer.allocUnsafe(CHUNK);
  const line = new LineBytes(maxLineChars * 4);
  let position = 0;
  let n = 0;
  for (;;) {
    const { bytesRead } = await readAsync(fd, chunk, 0, CHUNK, position);
    position += bytesRead;
    if (bytesRead === 0) {
      if (n >= skip && !line.isEmpty) yield line.take(n + 1, maxLineChars);
      return;
    }
    const data = chunk.subarray(0, bytesRead);
    let start = 0;
    for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, start)) {
      if (n >= skip) {
        line.add(data.subarray(start, at), false);
        yield line.take(n + 1, maxLineChars);
      }
      n++;
      start = at + 1;
    }
    if (n >= skip) line.add(data.subarray(start), true);
  }
}

/** The number of lines of `fd`, counted on its bytes as `streamLines` counts them. */
export const countFdLines = async (fd: number): Promise<number> => {
  const chunk = Buffer.allocUnsafe(CHUNK);
  let position = 0;
  let lines = 0;
  let open = false;
  for (;;) {
    const { bytesRead } = await readAsync(fd, chunk, 0, CHUNK, position);
    if (bytesRead === 0) return lines + (open ? 1 : 0);
    position += bytesRead;
    const data = chunk.subarray(0, bytesRead);
    for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) lines++;
    open = data[bytesRead - 1] !== 10;
  }
};
