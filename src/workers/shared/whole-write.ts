import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';

/**
 * Writes all of `bytes` at `fd`'s position: a write may take only part of them (a disk that fills
 * up midway returns short, and the next write fails with ENOSPC), so it is repeated until all are
 * in or one fails. A single `writeSync` would leave the rest unwritten and say nothing.
 */
export const writeAllSync = (fd: number, bytes: Uint8Array): number => {
  let at = 0;
  try {
    while (at < bytes.length) at += writeSync(fd, bytes, at);
  } catch (error) {
    throw Object.assign(error as Error, { written: at });
  }
  return at;
};

/**
 * Appends all of `bytes` to the file `fd` was opened to append to, or none of them: a part taken
 * before the write failed is cut off again, so a JSON-lines file never holds half a line for the
 * next line to run into.
 */
export const appendWholeSync = (fd: number, bytes: Uint8Array): void => {
  try {
    writeAllSync(fd, bytes);
  } catch (error) {
    const { written = 0 } = error as { written?: number };
    // Appended, the part is the file's end (no stat on the way: only a failure pays for one).
    if (written > 0) {
      try {
        ftruncateSync(fd, fstatSync(fd).size - written);
      } catch {
        // Cutting the part back is best effort: the write's own error is the one to report.
      }
    }
    throw error;
  }
};

/** Appends `text` (whole lines) to `file`, created with `mode`, whole or not at all; throws. */
export const appendLinesSync = (file: string, text: string, mode = 0o600): void => {
  const fd = openSync(file, 'a', mode);
  try {
    appendWholeSync(fd, Buffer.from(text));
  } finally {
    closeSync(fd);
  }
};
