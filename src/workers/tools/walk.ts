import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { readFd } from '../shared/bounded-read.ts';
import { ConfinedError, isInside, type ConfinePolicy } from '../shared/confine.ts';
import { openConfined, openConfinedFile, type Opened } from '../shared/confined-open.ts';

/** An ignore file larger than this is not read (a real one is a few KiB). */
const MAX_IGNORE_BYTES = 1024 * 1024;

/** One entry met while walking; `rel` is relative to the start, with "/" separators. */
export interface WalkEntry {
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

export interface WalkOptions {
  /** The real workspace root: `.gitignore` files are read from here down to `start`. */
  root: string;
  /** The real directory to walk. */
  start: string;
  /** 1 lists only `start` itself. */
  maxDepth: number;
  /** Walk into and yield dotfiles (`.git` is never walked). */
  hidden: boolean;
  /** What every directory and ignore file opened must pass. */
  policy: ConfinePolicy;
}

interface Rules {
  base: string;
  rules: Ignore;
}

/** An ignore file's text, or '' when it is missing, refused or unreadable. */
const readIgnoreFile = async (file: string, policy: ConfinePolicy): Promise<string> => {
  try {
    const opened = openConfinedFile(file, policy);
    try {
      return (await readFd(opened.fd, MAX_IGNORE_BYTES, file)).toString('utf8');
    } finally {
      opened.close();
    }
  } catch {
    // A missing, oversized or special (FIFO, /dev/zero) ignore file ignores nothing.
    return '';
  }
};

const loadRules = async (
  base: string,
  dir: string,
  files: string[],
  policy: ConfinePolicy,
): Promise<Rules | null> => {
  const texts = await Promise.all(
    files.map((file) => readIgnoreFile(path.join(dir, file), policy)),
  );
  const text = texts.join('\n');
  return text.trim() ? { base, rules: ignore().add(text) } : null;
};

/** The `.gitignore` rules that apply at `start`: those of the root and every directory between. */
const initialRules = async (root: string, start: string, policy: ConfinePolicy) => {
  const dirs = isInside(start, root) ? [root] : [start];
  for (const part of path
    .relative(dirs[0] ?? start, start)
    .split(path.sep)
    .filter(Boolean))
    dirs.push(path.join(dirs.at(-1) ?? root, part));
  const rules = await Promise.all(
    dirs.map((dir, i) =>
      loadRules(
        dir,
        dir,
        i === 0 && dir === root ? ['.gitignore', '.git/info/exclude'] : ['.gitignore'],
        policy,
      ),
    ),
  );
  return rules.filter((rule): rule is Rules => rule !== null);
};

/** True when git would ignore `abs` under any of `rules`. */
const isIgnored = (rules: Rules[], abs: string, isDir: boolean): boolean =>
  rules.some(({ base, rules: ignores }) => {
    if (!isInside(abs, base) || abs === base) return false;
    const rel = path.relative(base, abs).split(path.sep).join('/');
    return ignores.ignores(isDir ? `${rel}/` : rel);
  });

/** A subdirectory opened without following a symlink, or null when it is refused or gone. */
const openChild = (at: string, policy: ConfinePolicy): Opened | null => {
  try {
    return openConfined(at, { ...policy, want: 'dir' }, { noFollow: true });
  } catch (error) {
    if (error instanceof ConfinedError) return null;
    throw error;
  }
};

async function* walkDir(
  dir: Opened,
  depth: number,
  rules: Rules[],
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  const own = await loadRules(dir.real, dir.ref, ['.gitignore'], options.policy);
  const active = own && dir.real !== options.start ? [...rules, own] : rules;
  const entries = await readdir(dir.ref, { withFileTypes: true }).catch(() => []);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const dirent of entries) {
    if (dirent.name === '.git') continue;
    if (!options.hidden && dirent.name.startsWith('.')) continue;
    const abs = path.join(dir.real, dirent.name);
    if (isIgnored(active, abs, dirent.isDirectory())) continue;
    const rel = path.relative(options.start, abs).split(path.sep).join('/');
    const at = path.join(dir.ref, dirent.name);
    yield { rel, abs, at, dirent, depth };
    // Symlinked directories are listed, never entered: they may lead outside or loop.
    if (!dirent.isDirectory() || depth >= options.maxDepth) continue;
    const child = openChild(at, options.policy);
    if (!child) continue;
    try {
      yield* walkDir(child, depth + 1, active, options);
    } finally {
      child.close();
    }
  }
}

/**
 * Walks `start` depth-first in name order, skipping `.git` and what `.gitignore` files ignore.
 * Each directory is opened by descriptor (subdirectories without following symlinks) and checked
 * against `policy`, and listed through that descriptor. Stopping the iteration closes them all.
 */
export async function* walk(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const rules = await initialRules(options.root, options.start, options.policy);
  const start = openConfined(options.start, { ...options.policy, want: 'dir' });
  try {
    yield* walkDir(start, 1, rules, options);
  } finally {
    start.close();
  }
}
