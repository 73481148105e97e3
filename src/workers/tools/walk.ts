import type { Dirent } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { isInside } from './sandbox.ts';

/** One entry met while walking; `rel` is relative to the start, with "/" separators. */
export interface WalkEntry {
  rel: string;
  abs: string;
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
}

interface Rules {
  base: string;
  rules: Ignore;
}

const loadRules = async (dir: string, files: string[]): Promise<Rules | null> => {
  const texts = await Promise.all(
    files.map((file) => readFile(path.join(dir, file), 'utf8').catch(() => '')),
  );
  const text = texts.join('\n');
  return text.trim() ? { base: dir, rules: ignore().add(text) } : null;
};

/** The `.gitignore` rules that apply at `start`: those of the root and every directory between. */
const initialRules = async (root: string, start: string): Promise<Rules[]> => {
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
        i === 0 && dir === root ? ['.gitignore', '.git/info/exclude'] : ['.gitignore'],
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

async function* walkDir(
  dir: string,
  depth: number,
  rules: Rules[],
  options: WalkOptions,
): AsyncGenerator<WalkEntry> {
  const own = await loadRules(dir, ['.gitignore']);
  const active = own && dir !== options.start ? [...rules, own] : rules;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const dirent of entries) {
    if (dirent.name === '.git') continue;
    if (!options.hidden && dirent.name.startsWith('.')) continue;
    const abs = path.join(dir, dirent.name);
    if (isIgnored(active, abs, dirent.isDirectory())) continue;
    const rel = path.relative(options.start, abs).split(path.sep).join('/');
    yield { rel, abs, dirent, depth };
    // Symlinked directories are listed, never entered: they may lead outside or loop.
    if (dirent.isDirectory() && depth < options.maxDepth)
      yield* walkDir(abs, depth + 1, active, options);
  }
}

/** Walks `start` depth-first in name order, skipping `.git` and what `.gitignore` files ignore. */
export async function* walk(options: WalkOptions): AsyncGenerator<WalkEntry> {
  const rules = await initialRules(options.root, options.start);
  yield* walkDir(options.start, 1, rules, options);
}
