import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, lstat, mkdir, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

// Snapshots of a workspace's files, for undo: each is a commit in a private object store under
// $NIFFLER_HOME (never the repository's own .git), made with git's plumbing — `git add -A` into
// our own index (so unchanged files are not hashed again) and `git write-tree`. Tracked and
// untracked files count, ignored ones do not; large untracked files and huge untracked trees are
// skipped with a note rather than waited for.

/** Untracked files larger than this are left out of a snapshot. */
export const MAX_SNAPSHOT_FILE_BYTES = 5 * 1024 * 1024;
/** More untracked files than this and the snapshot is not taken. */
const MAX_UNTRACKED_FILES = 20_000;
const TIMEOUT_MS = 60_000;

/** Git settings that would run programs: off, whatever a config says. */
const SAFE = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.autocrlf=false',
];

type SnapshotResult =
  { ok: true; commit: string; skipped: string[] } | { ok: false; reason: string };

/** One changed file between two snapshots. */
export interface FileChange {
  path: string;
  change: 'added' | 'modified' | 'deleted';
}

interface GitRun {
  stdout: string;
  code: number;
  stderr: string;
}

/**
 * Whether `dir` is inside `root` (a real path) once its symlinks are resolved: its nearest
 * existing ancestor's real path, with the missing rest. A dangling symlink on the way counts as
 * outside (what it names could be made anywhere).
 */
const leadsInside = async (dir: string, root: string): Promise<boolean> => {
  const missing: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      const real = path.join(await realpath(at), ...missing.reverse());
      return real === root || real.startsWith(root + path.sep);
    } catch {
      const link = await lstat(at).then(
        (stats) => stats.isSymbolicLink(),
        () => false,
      );
      if (link || path.dirname(at) === at) return false;
      missing.push(path.basename(at));
    }
  }
};

export class SnapshotStore {
  readonly #dir: string;
  readonly #root: string;

  /** `dir`: this workspace's store (under `$NIFFLER_HOME/snapshots/`); `root`: the workspace. */
  constructor(dir: string, root: string) {
    this.#dir = dir;
    this.#root = root;
  }

  #git(args: string[], options: { input?: string; plain?: boolean } = {}): Promise<GitRun> {
    const store = options.plain
      ? {}
      : {
          GIT_DIR: this.#dir,
          GIT_WORK_TREE: this.#root,
          GIT_INDEX_FILE: path.join(this.#dir, 'niffler-index'),
        };
    return new Promise((resolve) => {
      const child = execFile(
        'git',
        [...SAFE, ...args],
        {
          cwd: this.#root,
          timeout: TIMEOUT_MS,
          maxBuffer: 64 * 1024 * 1024,
          env: {
            ...process.env,
            ...store,
            GIT_TERMINAL_PROMPT: '0',
            GIT_AUTHOR_NAME: 'niffler',
            GIT_AUTHOR_EMAIL: 'niffler@localhost',
            GIT_COMMITTER_NAME: 'niffler',
            GIT_COMMITTER_EMAIL: 'niffler@localhost',
          },
        },
        (error, stdout, stderr) =>
          resolve({
            stdout,
            stderr,
            code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          }),
      );
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
  }

  async #init(): Promise<string | undefined> {
    if (existsSync(path.join(this.#dir, 'HEAD'))) return undefined;
    mkdirSync(path.dirname(this.#dir), { recursive: true, mode: 0o700 });
    const made = await this.#git(['init', '--bare', '--quiet', this.#dir], { plain: true });
    return made.code === 0
      ? undefined
      : `git could not make the snapshot store: ${made.stderr.trim()}`;
  }

  /**
   * The ignore rules of this snapshot: the repository's `.git/info/exclude`, plus each large
   * untracked file (anchored). Returns the large files, and an error when there are too many.
   */
  async #excludes(): Promise<{ skipped: string[] } | { reason: string }> {
    const listed = await this.#git(['ls-files', '--others', '--exclude-standard', '-z']);
    if (listed.code !== 0) return { reason: `git could not list files: ${listed.stderr.trim()}` };
    const untracked = listed.stdout.split('\0').filter(Boolean);
    if (untracked.length > MAX_UNTRACKED_FILES)
      return {
        reason: `${untracked.length} untracked files (more than ${MAX_UNTRACKED_FILES}): not snapshotted; add them to .gitignore to have undo here`,
      };
    const skipped: string[] = [];
    for (const file of untracked) {
      const stats = await lstat(path.join(this.#root, file)).catch(() => undefined);
      if (stats && stats.size > MAX_SNAPSHOT_FILE_BYTES) skipped.push(file);
    }
    const own = path.join(this.#root, '.git', 'info', 'exclude');
    const base = existsSync(own) ? readFileSync(own, 'utf8') : '';
    const escape = (file: string) => `/${file.replace(/([*?[\]\\!# ])/g, '\\$1')}`;
    writeFileSync(
      path.join(this.#dir, 'info-exclude'),
      `${base}\n${skipped.map(escape).join('\n')}\n`,
    );
    return { skipped };
  }

  /**
   * The workspace's files now, as a tree of the store (no commit, no ref): what `changes` compares
   * with a snapshot to tell which files a command changed.
   */
  async tree(): Promise<
    { ok: true; tree: string; skipped: string[] } | { ok: false; reason: string }
  > {
    const failed = await this.#init();
    if (failed) return { ok: false, reason: failed };
    const excludes = await this.#excludes();
    if ('reason' in excludes) return { ok: false, reason: excludes.reason };
    const exclude = ['-c', `core.excludesFile=${path.join(this.#dir, 'info-exclude')}`];
    const added = await this.#git([...exclude, 'add', '-A', '--ignore-errors', '.']);
    if (added.code !== 0 && !added.stderr.includes('warning'))
      return { ok: false, reason: `git add failed: ${added.stderr.trim()}` };
    const tree = await this.#git(['write-tree']);
    if (tree.code !== 0)
      return { ok: false, reason: `git write-tree failed: ${tree.stderr.trim()}` };
    return { ok: true, tree: tree.stdout.trim(), skipped: excludes.skipped };
  }

  /** Records the workspace's files now, as a commit after `parent` (if any). */
  async take(message: string, parent?: string): Promise<SnapshotResult> {
    const tree = await this.tree();
    if (!tree.ok) return tree;
    const commit = await this.#git([
      'commit-tree',
      tree.tree,
      ...(parent ? ['-p', parent] : []),
      '-m',
      message,
    ]);
    if (commit.code !== 0)
      return { ok: false, reason: `git commit-tree failed: ${commit.stderr.trim()}` };
    const sha = commit.stdout.trim();
    // A ref keeps it from any gc, and lists the snapshots for whoever looks at the store.
    await this.#git(['update-ref', `refs/niffler/${sha}`, sha]);
    return { ok: true, commit: sha, skipped: tree.skipped };
  }

  /** The files that differ between two snapshots (or trees). */
  async changes(from: string, to: string): Promise<FileChange[]> {
    const diff = await this.#git([
      'diff-tree',
      '-r',
      '--no-renames',
      '--name-status',
      '-z',
      from,
      to,
    ]);
    if (diff.code !== 0) throw new Error(`git diff-tree failed: ${diff.stderr.trim()}`);
    const fields = diff.stdout.split('\0').filter(Boolean);
    const out: FileChange[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const status = fields[i]!;
      out.push({
        path: fields[i + 1]!,
        change: status === 'A' ? 'added' : status === 'D' ? 'deleted' : 'modified',
      });
    }
    return out;
  }

  /** A unified diff of `files` between a snapshot and the working tree as it is now. */
  async diffToNow(snapshot: string, files: readonly string[]): Promise<string> {
    if (files.length === 0) return '';
    const now = await this.take('now, for a diff');
    if (!now.ok) throw new Error(now.reason);
    const diff = await this.#git([
      'diff',
      '--no-color',
      '--no-renames',
      now.commit,
      snapshot,
      '--',
      ...files,
    ]);
    return diff.stdout;
  }

  /**
   * Puts `files` back as they were in `snapshot`: written from it, or removed where the snapshot
   * did not have them. A file whose directory now leads outside the workspace (a symlink made
   * since) is refused, not written through.
   */
  async restore(snapshot: string, files: readonly FileChange[]): Promise<string[]> {
    const refused: string[] = [];
    const root = await realpath(this.#root);
    for (const { path: file } of files) {
      const target = path.join(this.#root, file);
      // Checked before a directory is made (through a symlink it would be made outside), and
      // once more after.
      if (!(await leadsInside(path.dirname(target), root))) {
        refused.push(file);
        continue;
      }
      await mkdir(path.dirname(target), { recursive: true });
      const dir = await realpath(path.dirname(target));
      if (dir !== root && !dir.startsWith(root + path.sep)) {
        refused.push(file);
        continue;
      }
      const listed = await this.#git(['ls-tree', '-z', snapshot, '--', file]);
      const entry = listed.stdout.split('\0')[0];
      await rm(target, { force: true });
      if (!entry) continue;
      const [mode = '', , sha = ''] = (entry.split('\t')[0] ?? '').split(' ');
      const blob = await this.#blob(sha);
      if (mode === '120000') await symlink(blob.toString('utf8'), target);
      else {
        await writeFile(target, blob);
        await chmod(target, mode === '100755' ? 0o755 : 0o644);
      }
    }
    return refused;
  }

  #blob(sha: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      execFile(
        'git',
        [...SAFE, 'cat-file', 'blob', sha],
        {
          env: { ...process.env, GIT_DIR: this.#dir },
          encoding: 'buffer',
          maxBuffer: 256 * 1024 * 1024,
        },
        (error, stdout) => (error ? reject(new Error(error.message)) : resolve(stdout)),
      );
    });
  }
}
