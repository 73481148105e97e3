import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';

/** How long a saved output is kept, and how much of them at most. */
interface PruneLimits {
  maxAgeMs: number;
  maxBytes: number;
}

/** A file this recent may be being read in pages right now: never removed. */
const IN_USE_MS = 10 * 60_000;

/**
 * Removes the saved outputs in `dir` older than `maxAgeMs`, then the oldest until what is left
 * takes at most `maxBytes`. Files changed in the last ten minutes stay. Returns what went.
 */
export const pruneOutputs = async (
  dir: string,
  limits: PruneLimits,
  now = Date.now(),
): Promise<{ removed: number; bytes: number }> => {
  const names = await readdir(dir).catch(() => [] as string[]);
  const files = (
    await Promise.all(
      names.map(async (name) => {
        const file = path.join(dir, name);
        const info = await stat(file).catch(() => null);
        return info?.isFile() ? { file, size: info.size, mtime: info.mtimeMs } : [];
      }),
    )
  )
    .flat()
    .sort((a, b) => a.mtime - b.mtime);
  let total = files.reduce((sum, f) => sum + f.size, 0);
  let removed = 0;
  let bytes = 0;
  for (const f of files) {
    if (now - f.mtime < IN_USE_MS) break;
    if (now - f.mtime <= limits.maxAgeMs && total <= limits.maxBytes) continue;
    if (
      !(await rm(f.file, { force: true }).then(
        () => true,
        () => false,
      ))
    )
      continue;
    total -= f.size;
    removed++;
    bytes += f.size;
  }
  return { removed, bytes };
};
