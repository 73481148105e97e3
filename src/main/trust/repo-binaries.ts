import { sha256Hash } from '../../workers/shared/sha256.ts';
import { lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import { readFdSync } from '../../workers/shared/bounded-read.ts';
import { openConfinedFile } from '../../workers/shared/confined-open.ts';
import type { Part } from './part.ts';
import { BUILTIN_SERVERS } from '../config/lsp-builtins.ts';

/** The most of a server's entry file hashed; a larger one counts by its size and times alone. */
const MAX_HASHED = 16 * 1024 * 1024;

/** The repository's own copy of a built-in server: `node_modules/.bin/<command>`. */
export const repoBinary = (root: string, command: string): string =>
  path.join(root, 'node_modules', '.bin', command);

/** The commands of the built-ins that npm installs into a project (`node_modules/.bin`). */
const npmCommands = (): { server: string; command: string }[] =>
  Object.entries(BUILTIN_SERVERS).flatMap(([server, builtin]) =>
    builtin.commands.map(({ command }) => ({ server, command })),
  );

/** Hashes already made, by the file's identity: a daemon's reloads read each file once. */
const hashes = new Map<string, string>();

/** SHA-256 of the file `bin` leads to (its symlinks followed), or its identity when unreadable. */
const digestOf = (bin: string): string => {
  const stats = statSync(bin);
  const identity = `${bin}:${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
  const known = hashes.get(identity);
  if (known) return known;
  let digest: string;
  try {
    const opened = openConfinedFile(bin, {});
    try {
      digest = sha256Hash()
        .update(readFdSync(opened.fd, MAX_HASHED, bin))
        .digest('hex');
    } finally {
      opened.close();
    }
  } catch {
    digest = `unread:${stats.size}:${stats.mtimeMs}`;
  }
  hashes.set(identity, digest);
  return digest;
};

/**
 * The repository's own language server programs (`node_modules/.bin/typescript-language-server`…)
 * as parts of what it contributes: they run only once the repository is trusted, and trust holds
 * for exactly the file the user trusted (another version of it is a change to trust again).
 */
export const repoBinaryParts = (root: string): Part[] =>
  npmCommands().flatMap(({ server, command }) => {
    const bin = repoBinary(root, command);
    try {
      // Most projects have none: no exception thrown (and its stack made) for each.
      if (!lstatSync(bin, { throwIfNoEntry: false })) return [];
    } catch {
      return [];
    }
    const relative = path.relative(root, bin);
    let sha256: string;
    try {
      sha256 = digestOf(bin);
    } catch {
      sha256 = 'dangling';
    }
    return [
      {
        key: `bin:${relative}`,
        path: ['lsp', server],
        file: bin,
        line: undefined,
        value: { command: relative, sha256 },
        kind: 'server' as const,
      },
    ];
  });
