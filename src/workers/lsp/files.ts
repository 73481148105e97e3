import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readBoundedFile, formatBytes } from '../shared/bounded-read.ts';
import { ConfinedError, isInside } from '../shared/confine.ts';

// Which files reach a language server, and how paths look to the model. A server is given a
// workspace file's text only: nothing outside the root, nothing over the size limit, no binary.

/** The most a language server is given of one file; a larger one is left out (a note says so). */
const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;

/** How far into a file a NUL byte makes it binary (as git and grep judge it). */
const BINARY_PROBE = 8000;

/** A file's text for its server, or why it is not given one. */
type DocumentRead = { ok: true; text: string } | { ok: false; reason: string; missing?: boolean };

/** Where files may be read from: the root, minus what is excluded (`$NIFFLER_HOME`). */
export interface Place {
  root: string;
  excluded: readonly string[];
}

/** True when `file` (absolute, normalized) is inside the workspace and not excluded. */
export const isWorkspaceFile = (file: string, place: Place): boolean =>
  isInside(file, place.root) && !place.excluded.some((dir) => isInside(file, dir));

/** `file` as the model reads it: relative to the root, or marked as outside the workspace. */
export const shown = (file: string, place: Place): string =>
  isWorkspaceFile(file, place)
    ? path.relative(place.root, file) || path.basename(file)
    : `(outside the workspace) ${path.basename(file)}`;

export const toUri = (file: string): string => pathToFileURL(file).href;

/** The absolute path of a `file://` URI; undefined for another scheme or a bad URI. */
export const fromUri = (uri: string): string | undefined => {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return path.normalize(fileURLToPath(uri));
  } catch {
    return undefined;
  }
};

/** Reads a workspace file for a server: confined to the root, bounded, and not binary. */
export const readDocument = async (file: string, place: Place): Promise<DocumentRead> => {
  const name = shown(file, place);
  let text: string;
  try {
    text = await readBoundedFile(file, {
      maxBytes: MAX_DOCUMENT_BYTES,
      allowedRoots: [place.root],
      excluded: place.excluded,
      shown: name,
    });
  } catch (error) {
    if (error instanceof ConfinedError) {
      if (error.code === 'too-large')
        return {
          ok: false,
          reason: `${name} is over the ${formatBytes(MAX_DOCUMENT_BYTES)} a language server is given`,
        };
      return {
        ok: false,
        reason: error.message,
        ...(error.code === 'not-found' ? { missing: true } : {}),
      };
    }
    return { ok: false, reason: `${name} could not be read: ${(error as Error).message}` };
  }
  if (text.slice(0, BINARY_PROBE).includes('\0'))
    return { ok: false, reason: `${name} is binary; a language server is given text files only` };
  return { ok: true, text };
};
