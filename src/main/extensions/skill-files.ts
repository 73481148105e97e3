import { sha256Hash } from '../../workers/shared/sha256.ts';
import { lstatSync, readdirSync, readlinkSync, readSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';
import { isInside } from '../../workers/shared/confine.ts';
import { openConfinedFile } from '../../workers/shared/confined-open.ts';

// What a skill's directory holds, looked at without leaving it: the files the `skill` tool lists
// for the model, and — for a repository's skill — the content digest its trust part covers.
// Symlinks are read (their text), never followed out of the directory; nothing outside it is
// opened.

/** Entries looked at in one skill directory, at most (listed and hashed). */
const MAX_SKILL_ENTRIES = 500;
/** Directory levels walked below the skill's own. */
const MAX_DEPTH = 6;
/** Directories never walked: version control, dependencies, caches. */
const SKIPPED = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv']);
/** Bytes of one file hashed, at most; a larger one counts by its size and change time. */
const MAX_HASHED = 16 * 1024 * 1024;

/** One entry of a skill directory. */
export interface SkillEntry {
  /** Relative to the skill's directory, `/`-separated: `scripts/extract.py`. */
  path: string;
  /**
   * `file` (a regular file, or a link to one inside the directory), `outside` (a link leading out
   * of it, or nowhere: never followed), `other` (a FIFO, socket, device, or a link to a directory).
   */
  kind: 'file' | 'outside' | 'other';
  bytes: number;
  /** A regular file with an execute bit. */
  executable: boolean;
  /** What a link says, for `outside` and links inside. */
  link?: string;
  /** The real path of a `file`. */
  real?: string;
}

/** A directory's entries (files only, walked), and how many more there were past the bound. */
interface SkillListing {
  entries: SkillEntry[];
  more: number;
}

const sorted = (dir: string) => {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return []; // gone meanwhile, or unreadable: nothing to list there
  }
};

/** A link's entry: a file inside `top` it leads to, or where it leads otherwise. */
const linkEntry = (at: string, rel: string, top: string): SkillEntry => {
  let link = '';
  try {
    link = readlinkSync(at);
  } catch {
    // Gone meanwhile: listed as leading nowhere.
  }
  try {
    const real = realpathSync(at);
    if (!isInside(real, top))
      return { path: rel, kind: 'outside', bytes: 0, executable: false, link };
    const stats = lstatSync(real);
    return stats.isFile()
      ? {
          path: rel,
          kind: 'file',
          bytes: stats.size,
          executable: (stats.mode & 0o111) !== 0,
          link,
          real,
        }
      : { path: rel, kind: 'other', bytes: 0, executable: false, link };
  } catch {
    return { path: rel, kind: 'outside', bytes: 0, executable: false, link };
  }
};

const fileEntry = (at: string, rel: string, stats: Stats): SkillEntry =>
  stats.isFile()
    ? {
        path: rel,
        kind: 'file',
        bytes: stats.size,
        executable: (stats.mode & 0o111) !== 0,
        real: at,
      }
    : { path: rel, kind: 'other', bytes: 0, executable: false };

/**
 * The entries of the skill directory `real` (a real path), sorted, walked `MAX_DEPTH` deep at
 * most and `MAX_SKILL_ENTRIES` at most; dotfiles and `.git`, `node_modules`… left out. Symlinks
 * are never followed out of `real`.
 */
export const listSkillDir = (real: string): SkillListing => {
  const entries: SkillEntry[] = [];
  let more = 0;
  const walk = (dir: string, prefix: string, depth: number) => {
    for (const dirent of sorted(dir)) {
      if (dirent.name.startsWith('.') || SKIPPED.has(dirent.name)) continue;
      const at = path.join(dir, dirent.name);
      const rel = prefix ? `${prefix}/${dirent.name}` : dirent.name;
      if (dirent.isDirectory()) {
        if (depth < MAX_DEPTH) walk(at, rel, depth + 1);
        continue;
      }
      if (entries.length >= MAX_SKILL_ENTRIES) {
        more++;
        continue;
      }
      if (dirent.isSymbolicLink()) entries.push(linkEntry(at, rel, real));
      else {
        try {
          entries.push(fileEntry(at, rel, lstatSync(at)));
        } catch {
          // Gone meanwhile.
        }
      }
    }
  };
  walk(real, '', 0);
  return { entries, more };
};

/** Hashes kept by what the file's stat says: a reload hashes only what changed. */
const hashes = new Map<string, string>();
const KEEP_HASHES = 20_000;

/** The SHA-256 of a file inside `top` (opened confined to it), or its size and change time when large. */
const hashFile = (file: string, top: string): string => {
  const opened = openConfinedFile(file, { roots: [top] });
  try {
    const { size, mtimeMs, ctimeMs, ino, dev } = opened.stats;
    const key = `${opened.real}\0${dev}:${ino}:${size}:${mtimeMs}:${ctimeMs}`;
    const known = hashes.get(key);
    if (known) return known;
    let digest: string;
    if (size > MAX_HASHED) digest = `large, ${size} bytes, changed at ${ctimeMs}`;
    else {
      const hash = sha256Hash();
      const buffer = Buffer.allocUnsafe(Math.min(Math.max(size, 1), 1024 * 1024));
      let read: number;
      while ((read = readSync(opened.fd, buffer, 0, buffer.length, null)) > 0)
        hash.update(buffer.subarray(0, read));
      digest = hash.digest('hex').slice(0, 16);
    }
    if (hashes.size >= KEEP_HASHES) hashes.clear();
    hashes.set(key, digest);
    return digest;
  } finally {
    opened.close();
  }
};

/**
 * What a repository skill's trust part covers of its files: each file by its content's digest
 * (and `+x` when executable: that decides what runs), each link by what it says. Past the bound,
 * how many were left out. Nothing outside `real` is read.
 */
export const skillDigest = (real: string): Record<string, string> => {
  const listing = listSkillDir(real);
  const files: Record<string, string> = {};
  for (const entry of listing.entries) {
    if (entry.kind === 'file') {
      try {
        files[entry.path] =
          `${hashFile(entry.real!, real)}${entry.executable ? ' +x' : ''}` +
          (entry.link !== undefined ? ` (link ${entry.link})` : '');
      } catch (error) {
        files[entry.path] = `unreadable: ${(error as Error).message}`;
      }
    } else if (entry.kind === 'outside')
      files[entry.path] = `link out of the skill: ${entry.link ?? '?'}`;
    else files[entry.path] = 'not a regular file';
  }
  if (listing.more) files['…'] = `${listing.more} more entries, not looked at`;
  return files;
};
