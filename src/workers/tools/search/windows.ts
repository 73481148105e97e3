import { readSync } from 'node:fs';
import type { FileLines } from './content.ts';
import type { LineMatcher } from './matcher.ts';

// One file of a search read in windows of whole lines — memory holds one window, whatever the
// file — and matched: ripgrep's binary rule (a NUL byte ends what is searched), lines longer than
// a window searched in their start only, a window without the bytes every match holds skipped
// undecoded. Between windows the read checks its deadline and cancel flag and moves its beat.

/** Bytes read at once: a window of whole lines (a longer line is searched in its start only). */
const WINDOW = 4 * 1024 * 1024;
/** ripgrep's read size: a NUL byte makes the rest of the file from its block on binary. */
const BINARY_BLOCK = 64 * 1024;

let buffer = Buffer.allocUnsafe(64 * 1024);

const bufferFor = (size: number): Buffer => {
  if (buffer.length < size)
    buffer = Buffer.allocUnsafe(Math.min(WINDOW, Math.max(size, 2 * buffer.length)));
  return buffer;
};

/** What reading one file gave. */
interface Read {
  count: number;
  binary: boolean;
  longLines: number;
}

/** Lines in `data[0, end)` (whole lines joined by "\n"). */
const countLineBytes = (data: Buffer, end: number): number => {
  let n = 1;
  for (let at = data.indexOf(10); at !== -1 && at < end; at = data.indexOf(10, at + 1)) n++;
  return n;
};

const countNewlines = (text: string, from: number, to: number): number => {
  let n = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1))
    n++;
  return n;
};

/**
 * Matches `text` (whole lines joined by "\n", the first numbered `first`) and returns the number
 * of its lines. `stop` is set when the mode needs no more of the file.
 */
const matchWindow = (
  text: string,
  first: number,
  matcher: LineMatcher,
  lines: FileLines | null,
  state: { count: number; stop: boolean },
  wantCount: boolean,
): number => {
  let cursor = 0;
  let line = first;
  const split = lines?.wantsContext ? text.split('\n') : undefined;
  const lineAt = (n: number) => split?.[n - first];
  matcher.each(text, (start, end) => {
    state.count++;
    if (!lines) {
      state.stop = !wantCount;
      return wantCount;
    }
    line += countNewlines(text, cursor, start);
    cursor = start;
    lines.match(line, text.slice(start, end), lineAt);
    return true;
  });
  const last = split ? first + split.length - 1 : line + countNewlines(text, cursor, text.length);
  lines?.endWindow(last, lineAt);
  return last - first + 1;
};

/**
 * The lines of `data` (at file offset `start`) that ripgrep searches before the NUL byte at `nul`:
 * it reads 64 KiB at a time and searches no block with a NUL in it (the file is binary from
 * there), so lines ending before that block's start.
 */
const beforeBinary = (data: Buffer, start: number, nul: number): Buffer => {
  const at = start + nul;
  const cut = at - (at % BINARY_BLOCK) - start;
  return cut <= 0 ? data.subarray(0, 0) : data.subarray(0, data.lastIndexOf(10, cut - 1) + 1);
};

/** What reading one file needs. */
interface Reading {
  fd: number;
  size: number;
  matcher: LineMatcher;
  /** Bytes every match contains: a window without them is skipped undecoded. */
  required: Buffer | null;
  lines: FileLines | null;
  wantCount: boolean;
  beat: Int32Array | undefined;
  deadline: number;
}

/** The read position of a file: the bytes carried over from the last window, the next line. */
interface Cursor {
  position: number;
  carry: number;
  first: number;
  /** In the rest of a line longer than the window (not searched). */
  skipping: boolean;
  longLines: number;
  /** A NUL byte was met: the file is binary from there. */
  binary: boolean;
}

/**
 * The part of `data` to match as whole lines: its end, and whether it is the file's last; null
 * when more must be read first (the bytes are kept in `buf` for the next read).
 */
const windowEnd = (buf: Buffer, data: Buffer, final: boolean, cur: Cursor): number | null => {
  const end = final ? data.length : data.lastIndexOf(10);
  if (end !== -1) return end;
  const at = data.byteOffset - buf.byteOffset;
  if (at > 0 || data.length < buf.length) {
    // The start of a line after a long one: read on.
    buf.copy(buf, 0, at, at + data.length);
    cur.carry = data.length;
    return null;
  }
  // A line longer than the window: its start is searched, the rest skipped.
  cur.skipping = true;
  cur.longLines++;
  return data.length;
};

/**
 * Reads and matches an open file a window at a time, up to the size it had when opened; 'stopped'
 * when the deadline or a cancel came before its end.
 */
export const readFile = (r: Reading): Read | 'stopped' => {
  const state = { count: 0, stop: false };
  const cur: Cursor = {
    position: 0,
    carry: 0,
    first: 1,
    skipping: false,
    longLines: 0,
    binary: false,
  };
  const buf = bufferFor(Math.min(r.size, WINDOW));
  for (let windows = 0; !state.stop; windows++) {
    if (windows > 0 && (Date.now() > r.deadline || (r.beat && Atomics.load(r.beat, 1) !== 0)))
      return 'stopped';
    const want = Math.min(buf.length - cur.carry, r.size - cur.position);
    const dataStart = cur.position - cur.carry;
    const got = want > 0 ? readSync(r.fd, buf, cur.carry, want, cur.position) : 0;
    cur.position += got;
    if (r.beat) Atomics.add(r.beat, 0, 1);
    let data = buf.subarray(0, cur.carry + got);
    const nul = data.indexOf(0, cur.carry);
    const final = got === 0 || cur.position >= r.size || nul !== -1;
    if (nul !== -1) {
      cur.binary = true;
      data = beforeBinary(data, dataStart, nul);
    }
    if (cur.skipping) {
      const newline = data.indexOf(10);
      if (newline === -1 && !final) {
        cur.carry = 0;
        continue;
      }
      data = data.subarray(newline === -1 ? data.length : newline + 1);
      cur.skipping = false;
    }
    const end = windowEnd(buf, data, final, cur);
    if (end === null) continue;
    const whole = final && data[end - 1] === 10 ? end - 1 : end;
    if (r.required && data.subarray(0, whole).indexOf(r.required) === -1) {
      if (!final) cur.first += countLineBytes(data, whole);
    } else if (!final || data.length > 0) {
      const text = data.toString('utf8', 0, whole);
      cur.first += matchWindow(text, cur.first, r.matcher, r.lines, state, r.wantCount);
    }
    if (final) break;
    const rest = cur.skipping ? 0 : data.length - end - 1;
    if (rest > 0) buf.copy(buf, 0, end + 1, data.length);
    cur.carry = rest;
  }
  return { count: state.count, binary: cur.binary && state.count === 0, longLines: cur.longLines };
};
