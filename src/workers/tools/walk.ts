import { readdirSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { ConfinedError, isInside, type ConfinePolicy } from '../shared/confine.ts';
import { openConfined, type Opened } from '../shared/confined-open.ts';
import { readIgnoreFile } from './search/chain.ts';
import {
  IGNORE_FILES,
  isSkipped,
  parseRules,
  type ChainLink,
  type DirRules,
  type RuleContext,
} from './search/rules.ts';

/** One entry met while walking; `rel` is relative to the start, with "/" separators. */
interface WalkEntry {
  rel: string;
  /** Real path: the directory's real path (read from its descriptor) and the name. */
  abs: string;
  /**
   * The entry through its directory's open descriptor: names this very entry until the walk
   * moves on (open files by it, not by `abs`).
   */
  at: string;
  dirent: Dirent;
  depth: number;
}

interface WalkOptions {
  /** The real top: ignore files are read from here down to `start`. */
  root: string;
  /** The real directory to walk. */
  start: string;
  /** 1 lists only `start` itself. */
  maxDepth: number;
  /** Walk into and yield hidden entries (`.git` is never walked). */
  hidden: boolean;
  /** What every directory and ignore file opened must pass. */
  policy: ConfinePolicy;
  /** The top is inside a git repository, so .gitignore files apply (default true). */
  inRepo?: boolean;
  /** core.excludesFile's text. */
  global?: string;
  /** Told of each directory that could not be read, relative to `start`. */
  unreadable?: (rel: string) => void;
}

/** The rules of a directory whose entries are `names` (read through its descriptor `ref`). */
const dirRules = (ref: string, names: ReadonlySet<string>, policy: ConfinePolicy) => {
  const rules: DirRules = {};
  let any = false;
  for (const name of IGNORE_FILES)
    if (names.has(name)) {
      const parsed = parseRules(readIgnoreFile(path.join(ref, name), policy));
      if (parsed) {
        rules[name === '.gitignore' ? 'gitignore' : name === '.ignore' ? 'ignore' : 'rgignore'] =
          parsed;
        any = true;
      }
    }
  if (names.has('.git')) {
    rules.repo = true;
    rules.exclude = parseRules(readIgnoreFile(path.join(ref, '.git/info/exclude'), policy));
    any = true;
  }
  return any ? rules : null;
};

/** The names in a directory found by path (for the directories above the start). */
const namesAt = (dir: string): Set<string> => {
  try {
    return new Set(readdirSync(dir));
  } catch {
    return new Set();
  }
};

/** The rules of the directories from `root` down to `start`'s parent, top first. */
const initialChain = (root: string, start: string, policy: ConfinePolicy): ChainLink[] => {
  if (!isInside(start, root) || start === root) return [];
  const chain: ChainLink[] = [];
  let dir = root;
  const parts = path.relative(root, start).split(path.sep);
  for (let i = 0; i < parts.length; i++) {
    const rules = dirRules(dir, namesAt(dir), policy);
    if (rules) chain.push({ rel: parts.slice(0, i).join('/'), rules });
    dir = path.join(dir, parts[i]!);
  }
  return chain;
};

/** A subdirectory opened without following a symlink, or null when it is refused or gone. */
const openChild = (at: string, policy: ConfinePolicy): Opened | null => {
  try {
    return openConfined(at, { ...policy, want: 'dir' }, { noFollow: true });
  } catch (error) {
    if (error instanceof ConfinedError) return null;
    throw error;
  }
};

interface Walking {
  options: WalkOptions;
  context: RuleContext;
  /** `start` relative to `root` ('' when they are one). */
  startRel: string;
}

const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function* walkDir(
  w: Walking,
  dir: Opened,
  rel: string,
  depth: number,
  chain: ChainLink[],
): Generator<WalkEntry> {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir.ref, { withFileTypes: true }).sort(byName);
  } catch {
    w.options.unreadable?.(rel.slice(w.startRel.length).replace(/^\//, '') || '.');
    return;
  }
  const own = dirRules(dir.ref, new Set(entries.map((e) => e.name)), w.options.policy);
  const here = own ? [...chain, { rel, rules: own }] : chain;
  for (const dirent of entries) {
    if (dirent.name === '.git') continue;
    const entryRel = rel ? `${rel}/${dirent.name}` : dirent.name;
    const isDir = dirent.isDirectory();
    if (isSkipped(here, entryRel, isDir, w.context)) continue;
    const at = path.join(dir.ref, dirent.name);
    yield {
      rel: w.startRel ? entryRel.slice(w.startRel.length + 1) : entryRel,
      abs: path.join(dir.real, dirent.name),
      at,
      dirent,
      depth,
    };
    // Symlinked directories are listed, never entered: they may lead outside or loop.
    if (!isDir || depth >= w.options.maxDepth) continue;
    const child = openChild(at, w.options.policy);
    if (!child) continue;
    try {
      yield* walkDir(w, child, entryRel, depth + 1, here);
    } finally {
      child.close();
    }
  }
}

/**
 * Walks `start` depth-first in name order, skipping `.git` and what ripgrep skips: what the ignore
 * files (.gitignore inside a repository, .ignore, .rgignore, .git/info/exclude, core.excludesFile)
 * leave out, and hidden entries unless `hidden`. Each directory is opened by descriptor (those
 * below the start without following a symlink), checked against `policy` and listed through that
 * descriptor. Stopping the iteration closes them all.
 */
export function* walk(options: WalkOptions): Generator<WalkEntry> {
  const startRel = isInside(options.start, options.root)
    ? path.relative(options.root, options.start).split(path.sep).join('/')
    : '';
  const root = startRel || options.start === options.root ? options.root : options.start;
  const w: Walking = {
    options,
    startRel,
    context: {
      inRepo: options.inRepo ?? true,
      global: parseRules(options.global ?? ''),
      hidden: options.hidden,
    },
  };
  const chain = initialChain(root, options.start, options.policy);
  const start = openConfined(options.start, { ...options.policy, want: 'dir' });
  try {
    yield* walkDir(w, start, startRel, 1, chain);
  } finally {
    start.close();
  }
}
