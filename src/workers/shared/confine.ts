import type { Stats } from 'node:fs';
import path from 'node:path';

// The rules of confined I/O: which real paths a read or write may reach, and which kinds of file.
// Pure: the descriptor work that produces the real path and the stats is in confined-open.ts.

/**
 * Where a confined open may land, in real paths (no symlinks). Without `roots` any place is
 * allowed; `excluded` wins over `roots` except inside `exempt`.
 */
export interface ConfinePolicy {
  /** The real directories a path must be inside (the workspace root first), or none to allow all. */
  roots?: readonly string[];
  /** Real directories nothing may reach even inside a root (`$NIFFLER_HOME`). */
  excluded?: readonly string[];
  /** Real directories inside an excluded one that stay reachable (the outputs directory). */
  exempt?: readonly string[];
  /** What the path must be: a regular file, a directory, or either (the default). */
  want?: 'file' | 'dir' | 'any';
}

type ConfinedErrorCode =
  | 'not-found'
  | 'outside'
  | 'excluded'
  | 'not-regular'
  | 'is-directory'
  | 'not-directory'
  | 'hard-link'
  | 'kernel-file'
  | 'symlink'
  | 'too-large';

/**
 * A refusal or failure of confined I/O. `message` is `<shown> <reason>`: what the path is, why it
 * was refused and what to do; `real` is where it led, when known.
 */
export class ConfinedError extends Error {
  override name = 'ConfinedError';
  constructor(
    readonly code: ConfinedErrorCode,
    shown: string,
    readonly reason: string,
    readonly real?: string,
    options?: ErrorOptions,
  ) {
    super(`${shown} ${reason}`, options);
  }
}

/** True when `child` is `parent` or below it; both absolute and normalized. `parent` may be `/`. */
export const isInside = (child: string, parent: string): boolean =>
  child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);

/** Kernel interfaces that look like regular files but are not (endless, or secrets of a process). */
const KERNEL_DIRS = ['/proc', '/sys'];

/** What a non-regular file is, in words. */
const kindOf = (stats: Stats): string =>
  stats.isDirectory()
    ? 'a directory'
    : stats.isFIFO()
      ? 'a FIFO (named pipe)'
      : stats.isSocket()
        ? 'a socket'
        : stats.isCharacterDevice() || stats.isBlockDevice()
          ? 'a device file'
          : stats.isSymbolicLink()
            ? 'a symlink'
            : 'a regular file';

/** Why `real` is out of bounds for `policy`, as an error, or null when it is in bounds. */
export const checkPlace = (
  shown: string,
  real: string,
  policy: ConfinePolicy,
): ConfinedError | null => {
  if (KERNEL_DIRS.some((dir) => isInside(real, dir)))
    return new ConfinedError(
      'kernel-file',
      shown,
      `is in ${real.split(path.sep).slice(0, 2).join(path.sep)}, a kernel interface, not a file; only regular files are read`,
      real,
    );
  const { roots, excluded = [], exempt = [] } = policy;
  if (roots && !roots.some((root) => isInside(real, root)))
    return new ConfinedError(
      'outside',
      shown,
      `resolves to ${real}, outside the allowed directories (${roots.join(', ')})`,
      real,
    );
  const hidden = excluded.find((dir) => isInside(real, dir));
  if (hidden && !exempt.some((dir) => isInside(real, dir)))
    return new ConfinedError(
      'excluded',
      shown,
      `resolves to ${real}, inside ${hidden}, which niffler keeps private (it holds its ` +
        'trust, sessions and credentials); no tool may read or write there',
      real,
    );
  return null;
};

/**
 * Why an object of these `stats` may not be used as `policy.want`, or null when it may. Under
 * `roots`, a file with several hard links is refused too.
 */
export const checkKind = (
  shown: string,
  stats: Stats,
  policy: ConfinePolicy,
): ConfinedError | null => {
  const want = policy.want ?? 'any';
  if (stats.isDirectory()) {
    if (want === 'file')
      return new ConfinedError('is-directory', shown, 'is a directory, not a file');
    return null;
  }
  if (want === 'dir')
    return new ConfinedError('not-directory', shown, `is ${kindOf(stats)}, not a directory`);
  if (!stats.isFile())
    return new ConfinedError(
      'not-regular',
      shown,
      `is ${kindOf(stats)}; only regular files are read or written (a FIFO would block, ` +
        'a device may never end). Point the path at a regular file',
    );
  // Another link to the same content may be outside: its content is not the workspace's to give.
  if (policy.roots && stats.nlink > 1)
    return new ConfinedError(
      'hard-link',
      shown,
      `is a hard link (${stats.nlink} links) that may share its content with a file elsewhere`,
    );
  return null;
};
