import type { ConfinePolicy } from '../shared/confine.ts';

// The pieces of one grep or glob that run in the tools pool's threads: a chunk of files to read
// and match (or to stat), and a walk where git cannot list the files. The search itself — the
// list, the order, the budgets, the answer — runs where the call came in (the host, or the thread
// that runs the tool whole), and hands these out.

/** The pool task that searches a chunk of files. */
export const SCAN_TASK = 'niffler:search-scan';
/** The pool task that walks a directory where git cannot list it. */
export const WALK_TASK = 'niffler:search-walk';

/** What grep matches; absent for glob, whose chunks only stat. */
export interface ScanPattern {
  pattern: string;
  ignoreCase: boolean;
  multiline: boolean;
}

/** How to decide ignore rules for paths git listed (walked paths come decided). */
export interface ScanRules {
  /** Directories (relative to `top`) holding ignore files, and those files' names. */
  dirs: Record<string, string[]>;
  /** Directories (relative to `top`) that are a repository's top (`.git` in them). */
  repos: string[];
  /** The top is inside a git repository (.gitignore files apply). */
  inRepo: boolean;
  /** core.excludesFile's text. */
  global: string;
  hidden: boolean;
}

/** One chunk of a search: files under `top/base`, in the search's order. */
export interface ScanChunk {
  /** Identifies the search: a thread keeps the rules it read for it. */
  search: string;
  /** The real directory the rules start at: the allowed root the search is in. */
  top: string;
  /** The searched directory, relative to `top` ('' for `top` itself). */
  base: string;
  /** Files relative to `base`, "/"-separated. */
  files: string[];
  /** Decide ignore rules (paths from git); absent when the walker already did. */
  rules?: ScanRules;
  policy: ConfinePolicy;
  /** grep's pattern; absent: stat each file (glob). */
  pattern?: ScanPattern;
  mode: 'content' | 'files_with_matches' | 'count' | 'stat';
  before: number;
  after: number;
  /** Lines of content kept whole in the chunk; past them matches are only counted. */
  maxTextChars: number;
  /** Matched lines of the chunk before which no text is kept (an offset far down). */
  textFrom: number;
  /** Characters of a line shown. */
  maxLineChars: number;
  /** Epoch milliseconds after which the chunk stops between files. */
  deadline: number;
  /**
   * Three Int32s shared with the owner: windows read (the scan moving), cancel (set by the owner:
   * stop between files), and the index of the file being read.
   */
  beat?: SharedArrayBuffer;
}

/** A line of content: its number, its text (cut), and whether it matched (else context). */
export type ContentLine = [n: number, text: string, matched: boolean];

/** A file of a chunk that is part of the answer. */
export interface ScanHit {
  /** Index in `ScanChunk.files`. */
  i: number;
  /** Matching lines (grep), 0 for glob. */
  count: number;
  /** Content mode: the lines, as far as the chunk kept text. */
  lines?: ContentLine[];
  /** Matched lines of this file before `lines` starts (no text kept for them). */
  skipped?: number;
  /** Text was dropped after `lines` (the chunk's budget): fetch the rest with `textFrom`. */
  cut?: boolean;
  /** glob: modification time, ms. */
  mtime?: number;
}

/** Files looked at and not searched, by why. */
export interface ScanSkips {
  binary: number;
  /** Refused by confinement: symlinks, FIFOs, sockets, devices, hard links. */
  refused: number;
  /** Listed by git but gone from disk. */
  gone: number;
  /** Lines longer than the longest searched (their start alone was searched). */
  longLines: number;
}

export interface ScanResult {
  hits: ScanHit[];
  /** Files kept by the rules and looked at (searched or stat'ed). */
  searched: number;
  /** Files ripgrep's rules leave out. */
  ruled: number;
  skips: ScanSkips;
  /** Entries that are directories (a submodule, a nested repository): walk them. */
  dirs: string[];
  /** The deadline or a cancel stopped the chunk before this file (an index in `files`). */
  stoppedAt?: number;
}

/** A walk for the files of `base` (relative to `top`) when git cannot list them. */
export interface WalkRequest {
  top: string;
  base: string;
  policy: ConfinePolicy;
  inRepo: boolean;
  global: string;
  hidden: boolean;
  deadline: number;
  /** Paths (relative to `base`) already listed, left out of the answer. */
  known?: string[];
}

export interface WalkAnswer {
  files: string[];
  /** The deadline stopped the walk. */
  stopped: boolean;
  /** Directories that could not be read, relative to `base`. */
  unreadable: string[];
}

/**
 * What a search's lead task (grep, glob) asks its owner on the task's port: run a chunk or a walk
 * on another of the pool's threads, drop one no longer wanted, pass progress on.
 */
export type SearchAsk =
  | { type: 'scan'; id: number; chunk: ScanChunk }
  /** The lead runs chunks itself: their beat, to be watched like a helper's. */
  | { type: 'beat'; beat: SharedArrayBuffer }
  /** The files of the chunk the lead runs now (the beat's third number indexes them). */
  | { type: 'files'; files: string[] }
  | { type: 'walk'; id: number; request: WalkRequest }
  | { type: 'drop'; id: number }
  | { type: 'progress'; progress: number; total?: number; message?: string };

/** The owner's answers to a lead task's asks. */
export type SearchReply =
  | { type: 'scanned'; id: number; result: ScanResult & { slow?: number[] } }
  | { type: 'walked'; id: number; answer: WalkAnswer }
  | { type: 'failed'; id: number; message: string };
