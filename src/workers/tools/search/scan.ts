import { readSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import type { ScanChunk, ScanHit, ScanResult, ScanSkips } from '../../protocol/search.ts';
import { ConfinedError } from '../../shared/confine.ts';
import { openConfinedDir, type ConfinedDir } from '../../shared/confined-dir.ts';
import { SearchRules, parentOf } from './chain.ts';
import { FileLines, type TextBudget } from './content.ts';
import { compileMatcher, requiredText, type LineMatcher } from './matcher.ts';

// One chunk of a search, in a pool thread: each file's directory opened and checked once (kept
// open for the chunk's next files), ripgrep's ignore rules decided for paths git listed, then each
// file read in windows of whole lines — memory holds one window, whatever the file — and matched,
// or only stat'ed for glob. Synchronous: a chunk is a few hundred files; between them the chunk
// checks its deadline and its cancel flag, and each window moves its beat for the owner to see.

// A regular expression that backtracks without end (nested quantifiers such as /(a+)+$/) switches
// to V8's linear-time engine instead of tying the thread up; patterns that engine cannot run
// (backreferences, lookaround) are bounded by the search's time per file: the owner ends the
// thread of a chunk whose beat stands still.
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

/** Bytes read at once: a window of whole lines (a longer line is searched in its start only). */
export const WINDOW = 4 * 1024 * 1024;
const OPEN_DIRS = 64;
/** ripgrep's read size: a NUL byte makes the rest of the file from its block on binary. */
const BINARY_BLOCK = 64 * 1024;
const KEPT_SEARCHES = 4;

let buffer = Buffer.allocUnsafe(64 * 1024);

const bufferFor = (size: number): Buffer => {
  if (buffer.length < size)
    buffer = Buffer.allocUnsafe(Math.min(WINDOW, Math.max(size, 2 * buffer.length)));
  return buffer;
};

/** The rules of the last few searches this thread took part in. */
const searches = new Map<string, SearchRules>();

const rulesFor = (chunk: ScanChunk): SearchRules | undefined => {
  if (!chunk.rules) return undefined;
  let rules = searches.get(chunk.search);
  if (!rules) {
    rules = new SearchRules(chunk.top, chunk.base, chunk.rules, chunk.policy);
    searches.set(chunk.search, rules);
    if (searches.size > KEPT_SEARCHES) searches.delete(searches.keys().next().value!);
  }
  return rules;
};

/**
 * The directories a chunk has open: the searched directory opened and checked once, each one
 * below it opened by name under its parent's descriptor (never through a symlink, as ripgrep
 * never follows one); the least recently used closed past `OPEN_DIRS`.
 */
class OpenDirs {
  readonly #open = new Map<string, ConfinedDir | null>();
  #lastDir = '\0';
  #last: ConfinedDir | null = null;
  constructor(private readonly chunk: ScanChunk) {}

  /** Directory `dir` (relative to the top, at or below the chunk's base), or null if refused. */
  get(dir: string): ConfinedDir | null {
    if (dir === this.#lastDir) return this.#last;
    let opened = this.#open.get(dir);
    if (opened === undefined) opened = this.#openNew(dir);
    else {
      this.#open.delete(dir);
      this.#open.set(dir, opened);
    }
    this.#lastDir = dir;
    this.#last = opened;
    return opened;
  }

  #openNew(dir: string): ConfinedDir | null {
    let opened: ConfinedDir | null;
    try {
      const { base, top, policy } = this.chunk;
      if (dir.length <= base.length) opened = openConfinedDir(path.join(top, dir), policy);
      else {
        const parent = this.get(parentOf(dir));
        opened = parent ? parent.openDir(dir.slice(dir.lastIndexOf('/') + 1), dir) : null;
      }
    } catch {
      opened = null; // gone, unreadable, a symlink or led outside: its files are refused
    }
    this.#open.set(dir, opened);
    if (this.#open.size > OPEN_DIRS) {
      const [oldest, dirOpened] = this.#open.entries().next().value!;
      if (oldest !== this.#lastDir) {
        dirOpened?.close();
        this.#open.delete(oldest);
      }
    }
    return opened;
  }

  close(): void {
    for (const opened of this.#open.values()) opened?.close();
    this.#open.clear();
    this.#lastDir = '\0';
  }
}

/** A path git or a walk gave that names something inside its directory, and nothing else. */
const isPlainPath = (rel: string): boolean => rel !== '' && !ODD_PATH.test(rel);
const ODD_PATH = /^\/|\/\/|(^|\/)\.\.?(\/|$)|\/$|\0/;

const newSkips = (): ScanSkips => ({ binary: 0, refused: 0, gone: 0, longLines: 0 });

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
const readFile = (r: Reading): Read | 'stopped' => {
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

interface Scanner {
  chunk: ScanChunk;
  matcher: LineMatcher | undefined;
  required: Buffer | null;
  budget: TextBudget;
  result: ScanResult;
  beat: Int32Array | undefined;
}

/**
 * One file of the chunk: its hit, undefined when it has none (the reason counted), 'stopped' when
 * the deadline came while it was read.
 */
const scanOne = (
  s: Scanner,
  dir: ConfinedDir,
  name: string,
  i: number,
): ScanHit | undefined | 'stopped' => {
  const { chunk, result } = s;
  if (!s.matcher) {
    const stats = dir.lstat(name);
    if (!stats) return void result.skips.gone++;
    if (stats.isDirectory()) return void result.dirs.push(chunk.files[i]!);
    if (!stats.isFile()) return void result.skips.refused++;
    result.searched++;
    return { i, count: 0, mtime: stats.mtimeMs };
  }
  let opened;
  try {
    opened = dir.openFile(name);
  } catch (error) {
    const code = error instanceof ConfinedError ? error.code : undefined;
    if (code === 'is-directory') result.dirs.push(chunk.files[i]!);
    else if (code === 'not-found') result.skips.gone++;
    else result.skips.refused++; // refused, or unreadable (permissions)
    return undefined;
  }
  try {
    if (opened.stats.size === 0) return void result.searched++;
    const lines =
      chunk.mode === 'content' ? new FileLines(s.budget, chunk.before, chunk.after) : null;
    const read = readFile({
      fd: opened.fd,
      size: opened.stats.size,
      matcher: s.matcher,
      // Context needs every window's lines: no window is skipped then.
      required: lines?.wantsContext ? null : s.required,
      lines,
      wantCount: chunk.mode === 'count',
      beat: s.beat,
      deadline: chunk.deadline,
    });
    if (read === 'stopped') return 'stopped';
    result.searched++;
    result.skips.longLines += read.longLines;
    if (read.binary) result.skips.binary++;
    if (read.count === 0) return undefined;
    if (!lines) return { i, count: read.count };
    return {
      i,
      count: read.count,
      lines: lines.lines,
      ...(lines.skipped ? { skipped: lines.skipped } : {}),
      ...(lines.cut ? { cut: true } : {}),
    };
  } catch {
    result.skips.refused++; // a read that failed (EIO, a file turned into something else)
    return undefined;
  } finally {
    opened.close();
  }
};

/** Searches (or stats) the files of `chunk`, in order. */
export const scanChunk = (chunk: ScanChunk): ScanResult => {
  const compiled = chunk.pattern ? compileMatcher(chunk.pattern) : undefined;
  if (compiled && 'error' in compiled) throw new Error(compiled.error);
  const required = chunk.pattern ? requiredText(chunk.pattern) : null;
  const s: Scanner = {
    chunk,
    matcher: compiled,
    required: required === null ? null : Buffer.from(required),
    budget: {
      chars: 0,
      max: chunk.maxTextChars,
      matched: 0,
      from: chunk.textFrom,
      maxLineChars: chunk.maxLineChars,
    },
    result: { hits: [], searched: 0, ruled: 0, skips: newSkips(), dirs: [] },
    beat: chunk.beat ? new Int32Array(chunk.beat) : undefined,
  };
  if (s.beat) Atomics.add(s.beat, 0, 1);
  const rules = rulesFor(chunk);
  const dirs = new OpenDirs(chunk);
  try {
    for (let i = 0; i < chunk.files.length; i++) {
      if (Date.now() > chunk.deadline || (s.beat && Atomics.load(s.beat, 1) !== 0)) {
        s.result.stoppedAt = i;
        break;
      }
      const file = chunk.files[i]!;
      if (s.beat) Atomics.store(s.beat, 2, i);
      if (!isPlainPath(file)) {
        s.result.skips.refused++;
        continue;
      }
      const rel = chunk.base ? `${chunk.base}/${file}` : file;
      if (rules && !rules.keepsFile(rel)) {
        s.result.ruled++;
        continue;
      }
      const dir = dirs.get(parentOf(rel));
      if (!dir) {
        s.result.skips.refused++;
        continue;
      }
      const hit = scanOne(s, dir, rel.slice(rel.lastIndexOf('/') + 1), i);
      if (hit === 'stopped') {
        s.result.stoppedAt = i;
        break;
      }
      if (hit) s.result.hits.push(hit);
    }
  } finally {
    dirs.close();
  }
  return s.result;
};
