import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { checkKind, checkPlace, ConfinedError, type ConfinePolicy } from './confine.ts';

// Opening by descriptor, then checking what was opened. On Linux a path is opened with O_PATH
// (no open of the object itself: a FIFO cannot block, a device sees nothing), its real path is
// read back from /proc/self/fd and checked, and only then is `/proc/self/fd/N` opened for reading
// — which reaches that same object whatever is renamed or swapped meanwhile. A symlink swapped
// between the check and the open therefore cannot lead outside. Elsewhere (macOS) the path is
// resolved and checked, opened with O_NOFOLLOW | O_NONBLOCK, and refused if the opened object is
// not the checked one: a race can make it fail, not leak.

/** Linux's O_PATH: a descriptor that names an object without opening it for I/O. */
const O_PATH = 0o10000000;

/** True where descriptors can be read back through /proc/self/fd (Linux). */
export const usesDescriptors = process.platform === 'linux' && existsSync('/proc/self/fd');

/** An object opened and checked. Close it when done: `ref` names the object only while open. */
export interface Opened {
  /** Real path of the object, read back from its descriptor. */
  real: string;
  stats: Stats;
  /**
   * A path that names exactly this object while it is open (`/proc/self/fd/N` on Linux, the real
   * path elsewhere): for `opendir`, or as the directory of files created in it.
   */
  ref: string;
  close: () => void;
}

/** An opened and checked regular file, with a descriptor for reading. */
export interface OpenedFile {
  fd: number;
  real: string;
  stats: Stats;
  close: () => void;
}

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

const openError = (shown: string, error: unknown): unknown => {
  const code = codeOf(error);
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return new ConfinedError('not-found', shown, 'does not exist', undefined, { cause: error });
  if (code === 'ELOOP')
    return new ConfinedError(
      'symlink',
      shown,
      'is a symlink loop, or a symlink where none is followed',
      undefined,
      { cause: error },
    );
  return error;
};

const closeQuietly = (fd: number): void => {
  try {
    closeSync(fd);
  } catch {
    // Already closed or never valid: nothing is left to release.
  }
};

const openByDescriptor = (file: string, shown: string, policy: ConfinePolicy, flags: number) => {
  let fd: number;
  try {
    fd = openSync(file, O_PATH | flags);
  } catch (error) {
    throw openError(shown, error);
  }
  try {
    const stats = fstatSync(fd);
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    const refused = checkPlace(shown, real, policy) ?? checkKind(shown, stats, policy);
    if (refused) throw refused;
    return { real, stats, ref: `/proc/self/fd/${fd}`, close: () => closeQuietly(fd) };
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
};

const openByPath = (file: string, shown: string, policy: ConfinePolicy, flags: number) => {
  let real: string;
  let before: Stats;
  try {
    real =
      flags & constants.O_NOFOLLOW
        ? path.join(realpathSync(path.dirname(file)), path.basename(file))
        : realpathSync(file);
    before = lstatSync(real);
  } catch (error) {
    throw openError(shown, error);
  }
  const refused = checkPlace(shown, real, policy) ?? checkKind(shown, before, policy);
  if (refused) throw refused;
  const fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const stats = fstatSync(fd);
  if (stats.ino !== before.ino || stats.dev !== before.dev) {
    closeQuietly(fd);
    throw new ConfinedError('symlink', shown, 'changed while it was opened; try again', real);
  }
  return { real, stats, ref: real, fd, close: () => closeQuietly(fd) };
};

/**
 * Opens `file` (following symlinks unless `noFollow`) and checks the object it reached against
 * `policy`: its real path and its kind. Throws `ConfinedError` when refused or missing.
 */
export const openConfined = (
  file: string,
  policy: ConfinePolicy,
  options: { shown?: string; noFollow?: boolean } = {},
): Opened => {
  const shown = options.shown ?? file;
  const flags = options.noFollow ? constants.O_NOFOLLOW : 0;
  return usesDescriptors
    ? openByDescriptor(file, shown, policy, flags)
    : openByPath(file, shown, policy, flags);
};

/** `openConfined` for a regular file, with a descriptor open for reading. */
export const openConfinedFile = (
  file: string,
  policy: ConfinePolicy,
  options: { shown?: string; noFollow?: boolean } = {},
): OpenedFile => {
  if (!usesDescriptors) {
    const opened = openByPath(file, options.shown ?? file, { ...policy, want: 'file' }, 0);
    return { fd: opened.fd, real: opened.real, stats: opened.stats, close: opened.close };
  }
  const opened = openConfined(file, { ...policy, want: 'file' }, options);
  try {
    // The same object, whatever its name leads to now.
    const fd = openSync(opened.ref, constants.O_RDONLY);
    return { fd, real: opened.real, stats: opened.stats, close: () => closeQuietly(fd) };
  } finally {
    opened.close();
  }
};
