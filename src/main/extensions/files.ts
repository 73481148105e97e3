import { readdirSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { readBoundedFileSync } from '../../workers/shared/bounded-read.ts';
import { tildify, type Env } from '../paths.ts';

/** What a repository item needs trust for: its part of the trust digest. */
export interface TrustNeed {
  /** `repo:agents.reviewer`, `claude:commands.deploy`, `opencode:agents.docs`. */
  key: string;
  path: string[];
  file: string;
  /** What the digest covers (frontmatter, a whole tool file). */
  value: unknown;
}

/** An extension as loaded, with the trust it needs when the repository contributes it. */
export type Loaded<T> = T & { trust?: TrustNeed };

/** An extension file larger than this is skipped: real ones are a few KiB. */
const MAX_FILE_BYTES = 256 * 1024;
/** Files read from one directory tree, at most. */
const MAX_FILES = 500;
/** Subdirectory levels of a commands tree (`git/commit.md` is one). */
const MAX_DEPTH = 4;

/** One extension file, read. */
export interface ExtensionFile {
  file: string;
  /** How messages name it: `~/.niffler/agents/x.md`, `.niffler/tools/lint.yaml`. */
  shown: string;
  /** Its path below the directory, without the extension, `/`-separated: `git/commit`. */
  name: string;
  text: string;
}

export interface DirOptions {
  /** File endings read (`.md`, `.yaml`). */
  endings: readonly string[];
  /** Read subdirectories too (commands' namespaces). */
  recursive?: boolean;
  /** The file must really be inside this directory (symlinks resolved). */
  confine: string;
  /** Directories it must not be inside (`$NIFFLER_HOME`, for a repository's files). */
  excluded?: readonly string[];
  env?: Env;
}

const entries = (dir: string): Dirent[] => {
  // Most of these directories do not exist: asked without an error to make (a dozen per config).
  if (!statSync(dir, { throwIfNoEntry: false })) return [];
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return []; // No such directory (the usual case), or not one: nothing to read there.
  }
};

/**
 * Reads the extension files of `dir` (sorted; subdirectories when `recursive`), each through the
 * bounded, confined reader. A file that cannot be read is a problem (`file: why`), not an error;
 * a missing directory is empty. Symlinked directories are not followed.
 */
export const readExtensionDir = (
  dir: string,
  options: DirOptions,
): { files: ExtensionFile[]; problems: string[] } => {
  const files: ExtensionFile[] = [];
  const problems: string[] = [];
  const walk = (at: string, prefix: string[], depth: number) => {
    const list = entries(at).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of list) {
      if (files.length + problems.length >= MAX_FILES) return;
      const file = path.join(at, entry.name);
      if (entry.isDirectory()) {
        if (options.recursive && depth < MAX_DEPTH && !entry.name.startsWith('.'))
          walk(file, [...prefix, entry.name], depth + 1);
        continue;
      }
      const ending = options.endings.find((e) => entry.name.endsWith(e));
      if (!ending || entry.name.startsWith('.')) continue;
      const shown = tildify(file, options.env);
      try {
        const text = readBoundedFileSync(file, {
          maxBytes: MAX_FILE_BYTES,
          allowedRoots: [options.confine],
          ...(options.excluded ? { excluded: options.excluded } : {}),
          shown,
        });
        const name = [...prefix, entry.name.slice(0, -ending.length)].join('/');
        files.push({ file, shown, name, text });
      } catch (error) {
        problems.push(`${shown}: skipped: ${(error as Error).message}`);
      }
    }
  };
  walk(dir, [], 0);
  return { files, problems };
};
