import path from 'node:path';
import v8 from 'node:v8';
import type { ScanChunk, ScanHit, ScanResult, ScanSkips } from '../../protocol/search.ts';
import { ConfinedError } from '../../shared/confine.ts';
import { openConfinedDir, type ConfinedDir } from '../../shared/confined-dir.ts';
import { SearchRules, parentOf } from './chain.ts';
import { FileLines, type TextBudget } from './content.ts';
import { compileMatcher, requiredText, type LineMatcher } from './matcher.ts';
import { readFile } from './windows.ts';

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

const OPEN_DIRS = 64;
const KEPT_SEARCHES = 4;

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
