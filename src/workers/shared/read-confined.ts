import { readSync } from 'node:fs';
import { realDirs } from './bounded-read.ts';
import { ConfinedError } from './confine.ts';
import { openConfinedFile } from './confined-open.ts';

// A text file of the workspace read whole, up to a bound, through the confined opener: the
// engine's instruction files and the agent files of other assistants (src/main).

/** Bytes read of any one file. */
export const MAX_FILE_BYTES = 64 * 1024;

type ConfinedRead = { text: string; cut: boolean; real: string } | { refused: string } | undefined;

/**
 * Reads the first `MAX_FILE_BYTES` of a file through the confined opener the file tools use (by
 * descriptor, checked against `within` after every symlink, regular files only: a FIFO, device or
 * /proc file is never read). Undefined when it does not exist.
 */
export const readConfined = (
  file: string,
  within: string,
  excluded: readonly string[] = [],
): ConfinedRead => {
  let opened;
  try {
    opened = openConfinedFile(file, {
      want: 'file',
      roots: realDirs([within]),
      excluded: realDirs(excluded),
    });
  } catch (error) {
    if (error instanceof ConfinedError)
      return error.code === 'not-found' ? undefined : { refused: error.reason };
    return { refused: `cannot be read (${(error as Error).message})` };
  }
  try {
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    let size = 0;
    for (let n = 1; n > 0 && size < buffer.length; size += n)
      n = readSync(opened.fd, buffer, size, buffer.length - size, null);
    const text = buffer.subarray(0, Math.min(size, MAX_FILE_BYTES)).toString('utf8');
    return { text, cut: size > MAX_FILE_BYTES, real: opened.real };
  } finally {
    opened.close();
  }
};
