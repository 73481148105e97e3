import { lstatSync, mkdirSync, type Stats } from 'node:fs';
import path from 'node:path';
import { writeAtomic } from './atomic.ts';
import { checkKind, checkPlace, ConfinedError, type ConfinePolicy } from './confine.ts';
import { openConfined, type Opened } from './confined-open.ts';

const nearestExisting = (dir: string, policy: ConfinePolicy, shown: string) => {
  const missing: string[] = [];
  for (let current = dir; ; current = path.dirname(current)) {
    try {
      return { opened: openConfined(current, policy, { shown }), missing };
    } catch (error) {
      const parent = path.dirname(current);
      if (!(error instanceof ConfinedError) || error.code !== 'not-found' || parent === current)
        throw error;
      missing.unshift(path.basename(current));
    }
  }
};

/**
 * Opens directory `dir` under `policy`, creating the missing part of it one directory at a time:
 * each is made inside its already checked parent (through the parent's descriptor) and opened
 * without following symlinks, so a directory swapped for a symlink meanwhile is refused.
 */
const openConfinedDir = (
  dir: string,
  policy: ConfinePolicy,
  options: { create?: boolean; shown?: string } = {},
): Opened => {
  const shown = options.shown ?? dir;
  const dirPolicy: ConfinePolicy = { ...policy, want: 'dir' };
  if (!options.create) return openConfined(dir, dirPolicy, { shown });
  const nearest = nearestExisting(dir, dirPolicy, shown);
  let opened = nearest.opened;
  const { missing } = nearest;
  try {
    for (const name of missing) {
      const next = path.join(opened.ref, name);
      try {
        mkdirSync(next);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const child = openConfined(next, dirPolicy, { shown, noFollow: true });
      opened.close();
      opened = child;
    }
    return opened;
  } catch (error) {
    opened.close();
    throw error;
  }
};

const lstatOrNull = (file: string): Stats | null => {
  try {
    return lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

/**
 * Writes `content` to `file` atomically (a temporary file and a rename, both inside the checked
 * directory's descriptor), creating missing parent directories. The directory must pass
 * `policy`; the name in it must be absent or a regular, single-link file — never a symlink.
 * Keeps an existing file's mode unless `mode` is given.
 */
export const writeConfined = async (
  file: string,
  content: string,
  policy: ConfinePolicy,
  options: { shown?: string; mode?: number } = {},
): Promise<{ created: boolean; real: string }> => {
  const shown = options.shown ?? file;
  const dir = openConfinedDir(path.dirname(file), policy, { create: true, shown });
  try {
    const name = path.basename(file);
    const real = path.join(dir.real, name);
    const target = path.join(dir.ref, name);
    const existing = lstatOrNull(target);
    const refused =
      checkPlace(shown, real, policy) ??
      (existing?.isSymbolicLink()
        ? new ConfinedError('symlink', shown, 'is a symlink now; it is never written through')
        : existing && checkKind(shown, existing, { ...policy, want: 'file' }));
    if (refused) throw refused;
    await writeAtomic(target, content, options.mode ?? (existing ? existing.mode & 0o7777 : 0o644));
    return { created: !existing, real };
  } finally {
    dir.close();
  }
};
