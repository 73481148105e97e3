import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** Directories never looked into: dependencies, build output, caches, anything hidden. */
const SKIPPED = new Set([
  'node_modules',
  'dist',
  'build',
  'out',
  'target',
  'vendor',
  'coverage',
  '__pycache__',
  'venv',
]);
/** Entries looked at, at most: a huge tree is judged by its first part. */
const MAX_ENTRIES = 5000;
const MAX_DEPTH = 6;

/**
 * The first file found of each of `endings` in the workspace, breadth first (a file near the
 * root is the one a project loads from): what says a language is there, and the file its server
 * opens to warm up. Bounded in entries and depth; never follows symlinks.
 */
export const findLanguageFiles = async (
  root: string,
  endings: ReadonlySet<string>,
): Promise<Map<string, string>> => {
  const found = new Map<string, string>();
  let queue = [root];
  let seen = 0;
  for (let depth = 0; depth <= MAX_DEPTH && queue.length && seen < MAX_ENTRIES; depth++) {
    const next: string[] = [];
    for (const dir of queue) {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        if (++seen > MAX_ENTRIES) break;
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!entry.name.startsWith('.') && !SKIPPED.has(entry.name)) next.push(full);
        } else if (entry.isFile()) {
          const ending = path.extname(entry.name);
          if (endings.has(ending) && !found.has(ending) && !entry.name.endsWith('.d.ts'))
            found.set(ending, full);
        }
      }
      if (found.size === endings.size) return found;
    }
    queue = next;
  }
  return found;
};
