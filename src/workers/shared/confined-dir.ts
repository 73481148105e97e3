import { closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from 'node:fs';
import path from 'node:path';
import { checkKind, checkPlace, ConfinedError, type ConfinePolicy } from './confine.ts';
import {
  openConfined,
  openConfinedFile,
  usesDescriptors,
  type Opened,
  type OpenedFile,
} from './confined-open.ts';

// A directory opened and checked once, and the files in it opened by name through its descriptor:
// what a search over thousands of files needs. On Linux the directory's real path is read back
// from its descriptor and checked once; each file is then opened under /proc/self/fd/DIR — the
// very directory that was checked, whatever is renamed meanwhile — with O_NOFOLLOW (a symlink put
// in its place is never followed), O_NONBLOCK and O_NOCTTY (a FIFO cannot block, a terminal is
// not taken), and checked by fstat — a regular file with one link — before a byte is read. One
// open a file instead of openConfinedFile's three (an O_PATH open, its real path read back, a
// reopen): a search opens tens of thousands. Elsewhere each file is checked as
// openConfinedFile does.

const O_PATH = 0o10000000;
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

const closeQuietly = (fd: number): void => {
  try {
    closeSync(fd);
  } catch {
    // Already closed: nothing to release.
  }
};

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** A checked directory; files in it are opened by name. Close it when done. */
export interface ConfinedDir {
  /** The directory's real path. */
  real: string;
  /**
   * Opens subdirectory `name` (one path component) without following a symlink: its real path is
   * this one's and the name, checked with no lookup. Throws `ConfinedError` when it is refused.
   */
  openDir(name: string, shown?: string): ConfinedDir;
  /**
   * Opens regular file `name` (one path component) here for reading, never following a symlink.
   * Throws `ConfinedError` (`not-found`, `not-regular`, `hard-link`, …) as openConfinedFile does.
   */
  openFile(name: string, shown?: string): OpenedFile;
  /** `lstat` of `name` here (a symlink is not followed), or null when it does not exist. */
  lstat(name: string): Stats | null;
  /** A path naming `name` in this very directory while it is open (for `readdir` and the like). */
  refOf(name: string): string;
  close(): void;
}

const notFound = (shown: string, error: unknown) =>
  new ConfinedError('not-found', shown, 'does not exist', undefined, { cause: error });

/** Linux: a file opened by name under the directory's descriptor, then checked. */
const openInDescriptor = (
  dir: Opened,
  name: string,
  shown: string,
  policy: ConfinePolicy,
): OpenedFile => {
  let fd: number;
  try {
    fd = openSync(`${dir.ref}/${name}`, FLAGS);
  } catch (error) {
    const code = codeOf(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(shown, error);
    if (code === 'ELOOP')
      throw new ConfinedError('symlink', shown, 'is a symlink; it is not followed');
    if (code === 'ENXIO') throw new ConfinedError('not-regular', shown, 'is a socket');
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    // The directory was checked; a name in it with no symlink followed stays where it is.
    const refused = checkKind(shown, stats, policy);
    if (refused) throw refused;
    return { fd, real: `${dir.real}/${name}`, stats, close: () => closeQuietly(fd) };
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
};

/** Linux: a subdirectory opened by name under its parent's descriptor, never through a symlink. */
const openDirInDescriptor = (
  parent: Opened,
  name: string,
  shown: string,
  policy: ConfinePolicy,
): Opened => {
  const real = `${parent.real}/${name}`;
  // Inside a checked directory, yet maybe a place kept private ($NIFFLER_HOME in the workspace).
  const refused = checkPlace(shown, real, policy);
  if (refused) throw refused;
  let fd: number;
  try {
    fd = openSync(`${parent.ref}/${name}`, O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY);
  } catch (error) {
    const code = codeOf(error);
    if (code === 'ENOENT') throw notFound(shown, error);
    if (code === 'ENOTDIR' || code === 'ELOOP')
      throw new ConfinedError('not-directory', shown, 'is not a directory (or is a symlink)');
    throw error;
  }
  return {
    real,
    stats: undefined as unknown as Stats,
    ref: `/proc/self/fd/${fd}`,
    close: () => closeQuietly(fd),
  };
};

const confinedDir = (opened: Opened, policy: ConfinePolicy): ConfinedDir => {
  const filePolicy: ConfinePolicy = { ...policy, want: 'file' };
  const openFile = usesDescriptors
    ? (name: string, shown = name) => openInDescriptor(opened, name, shown, filePolicy)
    : (name: string, shown = name) =>
        openConfinedFile(path.join(opened.real, name), filePolicy, { shown, noFollow: true });
  const openDir = usesDescriptors
    ? (name: string, shown = name) =>
        confinedDir(openDirInDescriptor(opened, name, shown, policy), policy)
    : (name: string, shown = name) =>
        openConfinedDir(path.join(opened.real, name), policy, { shown, noFollow: true });
  return {
    real: opened.real,
    openDir,
    openFile,
    lstat: (name) => {
      try {
        return lstatSync(`${opened.ref}/${name}`);
      } catch (error) {
        const code = codeOf(error);
        if (code === 'ENOENT' || code === 'ENOTDIR') return null;
        throw error;
      }
    },
    refOf: (name) => `${opened.ref}/${name}`,
    close: opened.close,
  };
};

/**
 * Opens directory `dir` (symlinks in it followed, then its real path checked against `policy`
 * once) for opening the files and subdirectories in it. Throws `ConfinedError` when it is refused
 * or missing.
 */
export const openConfinedDir = (
  dir: string,
  policy: ConfinePolicy,
  options: { shown?: string; noFollow?: boolean } = {},
): ConfinedDir => confinedDir(openConfined(dir, { ...policy, want: 'dir' }, options), policy);
