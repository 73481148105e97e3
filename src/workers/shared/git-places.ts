import {
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  symlinkSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';

// What git will read — and run — on the user's next git command, inside a directory a sandboxed
// command may write: the repository's `.git` (a directory, a `.git` file's gitdir and common dir,
// or a symlink's target), each submodule's and each linked worktree's `.git` in there. The
// sandbox binds each read-only: a bind mount cannot be written, renamed or removed, so `.git`
// cannot be moved aside and rebuilt, nor `commondir`, `config.worktree` or a `.git` file
// redirected. What a mount cannot hold — a `.git` that is missing (a workspace that is not a
// repository yet), a symlink (a mount lands on its target), a submodule's directory moved away
// and made anew — is checked after the command: a `.git` that appeared or changed there is
// moved aside, so git never honours it.

/** How a `.git` entry was before a command: its identity, or null when there was none. */
export interface GuardedEntry {
  path: string;
  /** `link`: a symlink's target (resolved), `text` as written (to put it back). */
  was: {
    dev: number;
    ino: number;
    mode: number;
    ctimeMs: number;
    link?: string;
    text?: string;
  } | null;
}

/** What a sandbox keeps read-only for git, and which `.git` entries it checks afterwards. */
interface GitPlaces {
  readOnly: string[];
  guard: GuardedEntry[];
}

// Most of what is looked for is missing (no commondir, no submodules): asked without throwing.
const lstat = (file: string): Stats | undefined => {
  try {
    return lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
};

const readSmall = (file: string): string | undefined => {
  if (!lstat(file)) return undefined;
  try {
    return readFileSync(file, 'utf8').slice(0, 64 * 1024);
  } catch {
    return undefined;
  }
};

const real = (file: string): string | undefined => {
  try {
    return realpathSync.native(file);
  } catch {
    return undefined;
  }
};

/** The gitdir a `.git` file points to (`gitdir: ../.git/modules/sub`), resolved. */
const gitdirOf = (gitFile: string): string | undefined => {
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readSmall(gitFile) ?? '');
  return match ? real(path.resolve(path.dirname(gitFile), match[1]!)) : undefined;
};

/** A git directory and, when it names one (`commondir`: a linked worktree's), its common dir. */
const gitDirs = (gitdir: string): string[] => {
  const common = readSmall(path.join(gitdir, 'commondir'))?.trim();
  const resolved = common ? real(path.resolve(gitdir, common)) : undefined;
  return resolved ? [gitdir, resolved] : [gitdir];
};

/** The directories git reads for the `.git` entry at `entry` (none when there is none). */
const dirsOf = (entry: string, stats: Stats | undefined): string[] => {
  if (!stats) return [];
  if (stats.isFile()) {
    const gitdir = gitdirOf(entry);
    return [entry, ...(gitdir ? gitDirs(gitdir) : [])];
  }
  const target = real(entry);
  if (!target || !lstat(target)?.isDirectory()) return [];
  return stats.isSymbolicLink() ? gitDirs(target) : [entry, ...gitDirs(target).slice(1)];
};

/** `path = …` of each submodule a `.gitmodules` names. */
const submodulePaths = (dir: string): string[] =>
  [...(readSmall(path.join(dir, '.gitmodules')) ?? '').matchAll(/^\s*path\s*=\s*(.+?)\s*$/gm)]
    .map((m) => m[1]!)
    .filter((p) => !path.isAbsolute(p) && !p.split('/').includes('..'));

/** The `.git` files of the linked worktrees a git directory records. */
const worktreeGitFiles = (gitdirs: readonly string[]): string[] =>
  gitdirs.flatMap((gitdir) => {
    let names: string[];
    try {
      const dir = path.join(gitdir, 'worktrees');
      names = lstat(dir)?.isDirectory() ? readdirSync(dir) : [];
    } catch {
      return [];
    }
    return names.flatMap((name) => {
      const file = readSmall(path.join(gitdir, 'worktrees', name, 'gitdir'))?.trim();
      return file ? [file] : [];
    });
  });

const identity = (entry: string, stats: Stats | undefined): GuardedEntry['was'] => {
  if (!stats) return null;
  // An inode number is soon reused: its kind (and a symlink's change time) tell a new entry.
  const { dev, ino, mode, ctimeMs } = stats;
  if (!stats.isSymbolicLink()) return { dev, ino, mode, ctimeMs };
  const link = real(entry);
  return { dev, ino, mode, ctimeMs, ...(link ? { link } : {}), text: readlinkSync(entry) };
};

const inside = (file: string, dir: string): boolean =>
  file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/**
 * The git places of the writable directory `dir` (its `.git`, its submodules' — to `depth`
 * levels — and its linked worktrees' inside it): what to bind read-only, and what to check after.
 */
export const gitPlaces = (dir: string, depth = 3): GitPlaces => {
  const readOnly = new Set<string>();
  const guard: GuardedEntry[] = [];
  const visit = (repo: string, level: number) => {
    const entry = path.join(repo, '.git');
    const stats = lstat(entry);
    guard.push({ path: entry, was: identity(entry, stats) });
    const dirs = dirsOf(entry, stats);
    for (const d of dirs) readOnly.add(d);
    for (const file of worktreeGitFiles(dirs.filter((d) => d !== entry || stats?.isDirectory())))
      if (inside(file, dir) && !readOnly.has(file) && lstat(file)) {
        guard.push({ path: file, was: identity(file, lstat(file)) });
        for (const d of dirsOf(file, lstat(file))) readOnly.add(d);
      }
    if (level >= depth) return;
    for (const sub of submodulePaths(repo)) {
      const at = path.join(repo, sub);
      if (lstat(at)?.isDirectory()) visit(at, level + 1);
    }
  };
  visit(dir, 0);
  return { readOnly: [...readOnly], guard };
};

/**
 * After a command: each guarded `.git` that appeared, or is another file than before, is moved
 * aside (renamed, nothing deleted) so that git never honours it. Returns what was moved, for the
 * command's result; empty when nothing changed.
 */
export const enforceGitGuard = (guard: readonly GuardedEntry[]): string[] => {
  const moved: string[] = [];
  for (const { path: entry, was } of guard) {
    const now = lstat(entry);
    const same =
      now !== undefined &&
      was !== null &&
      was.dev === now.dev &&
      was.ino === now.ino &&
      was.mode === now.mode &&
      // A symlink can be removed and made anew on the same inode: its change time tells. (A
      // directory or file was a mount point inside: the sandbox could not replace it, and a git
      // of the user's own changes its times meanwhile.)
      (!now.isSymbolicLink() || (was.ctimeMs === now.ctimeMs && real(entry) === was.link));
    if (same) continue;
    if (now) {
      const aside = `${entry}.niffler-blocked-${Date.now()}`;
      try {
        renameSync(entry, aside);
        moved.push(`${entry} → ${path.basename(aside)}`);
      } catch (error) {
        moved.push(`${entry} (could not be moved aside: ${(error as Error).message})`);
        continue;
      }
    }
    // A symlink removed or replaced is put back as it was; anything else gone stays gone (moved
    // away with its directory: git finds nothing there).
    if (was?.text !== undefined) {
      try {
        symlinkSync(was.text, entry);
        moved.push(`${entry} put back (→ ${was.text})`);
      } catch (error) {
        moved.push(`${entry} could not be put back: ${(error as Error).message}`);
      }
    }
  }
  return moved;
};
