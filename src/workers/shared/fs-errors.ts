import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

// Disk faults in plain words, with the real errno and the file: what every write of sessions, logs,
// outputs and state reports.

const PLAIN: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'the operation is not permitted',
  ENOENT: 'a directory on the way does not exist',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files on the system',
  EIO: 'an input/output error (a failing disk?)',
};

/** `the disk is full (ENOSPC)` for a file-system error; the error's message otherwise. */
export const describeFsError = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code && PLAIN[code]) return `${PLAIN[code]} (${code})`;
  return error instanceof Error ? error.message : String(error);
};

/** `could not write the transcript FILE: the disk is full (ENOSPC)`. */
export const fsFailure = (what: string, file: string, error: unknown): string =>
  `could not ${what} ${file}: ${describeFsError(error)}`;

/**
 * `mkdirSync(dir, { recursive: true })` that fails with the real reason: Node's recursive mkdir
 * says ENOENT where a directory cannot be made on a read-only file system (or without
 * permission), so the first missing directory is made alone to learn why.
 */
export const makeDirSync = (dir: string, mode = 0o700): void => {
  try {
    mkdirSync(dir, { recursive: true, mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    let missing = path.resolve(dir);
    for (let parent = path.dirname(missing); parent !== missing && !existsSync(parent);)
      [missing, parent] = [parent, path.dirname(parent)];
    // Throws the real error (EROFS, EACCES…); made after all, the rest is tried once more.
    mkdirSync(missing, { mode });
    mkdirSync(dir, { recursive: true, mode });
  }
};
