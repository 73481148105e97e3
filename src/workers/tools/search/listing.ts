import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ConfinePolicy } from '../../shared/confine.ts';
import { SearchRules, parentOf, readIgnoreFile } from './chain.ts';
import { gitPaths, type GitPaths } from './git-list.ts';
import { IGNORE_FILES, baseName, hasNegation } from './rules.ts';

// The candidates of a search, in its order: inside a git repository the tracked files (index
// order) then the untracked ones git does not ignore, as git prints them; the ignore files met on
// the way are noted for the scans, which decide ripgrep's rules on each path. Where git cannot
// list (no repository, no git, a directory the rules leave out) the search walks instead.

/** Where a search's files come from, and what is known of its rules. */
export class Listing {
  /** Files to look at, relative to the searched directory, in order. */
  readonly files: string[] = [];
  /** Directories (relative to the top) with ignore files, and their names. */
  readonly ruleDirs: Record<string, string[]> = {};
  /** Bumped whenever an ignore file is learnt of after scans began. */
  version = 0;
  /** Directories (relative to the top) where a rule was learnt of at each version. */
  readonly lateRules: { version: number; dir: string }[] = [];
  /** Repository tops (relative to the top) below or at the top. */
  readonly repos: string[] = [];
  /** Directories to walk (relative to the searched directory): nested repositories. */
  readonly nested: string[] = [];
  inRepo = false;
  done = false;
  /** git got stuck on an ignore file it cannot read (a FIFO): the rest must be walked. */
  stuck = false;
  /** git's index has all come (the untracked files come after it). */
  indexDone = false;
  /** git's complaints (unreadable directories). */
  warnings = '';
  #wake: () => void = () => undefined;
  #more: Promise<void>;
  readonly #runs: GitPaths[] = [];
  readonly #probed = new Set<string>();
  #stopped = false;

  constructor(
    /** The real searched directory. */
    readonly dir: string,
    /** The searched directory relative to the top. */
    readonly base: string,
    readonly top: string,
    private readonly keep: (rel: string) => boolean,
  ) {
    this.#more = new Promise((resolve) => (this.#wake = resolve));
  }

  /** Resolves when files are added or the listing ends. */
  get more(): Promise<void> {
    return this.#more;
  }

  #woken(): void {
    const wake = this.#wake;
    this.#more = new Promise((resolve) => (this.#wake = resolve));
    wake();
  }

  #topRel(rel: string): string {
    return this.base ? (rel ? `${this.base}/${rel}` : this.base) : rel;
  }

  /** Notes an ignore file at `dir` (relative to the top); true when it was not known. */
  noteRuleFile(dir: string, name: string, late: boolean): boolean {
    const names = (this.ruleDirs[dir] ??= []);
    if (names.includes(name)) return false;
    names.push(name);
    if (late) this.lateRules.push({ version: ++this.version, dir });
    return true;
  }

  /** Adds paths git printed (relative to the searched directory). */
  add(paths: readonly string[], late: boolean): void {
    for (const rel of paths) {
      if (rel.endsWith('/')) {
        this.nested.push(rel.slice(0, -1));
        continue;
      }
      const name = baseName(rel);
      if ((IGNORE_FILES as readonly string[]).includes(name))
        this.noteRuleFile(this.#topRel(parentOf(rel)), name, late);
      if (this.keep(rel)) this.files.push(rel);
    }
    this.#woken();
  }

  /** Adds files a walk found (already decided by the rules). */
  addWalked(paths: readonly string[]): void {
    for (const rel of paths) if (this.keep(rel)) this.files.push(rel);
    this.#woken();
  }

  finish(): void {
    this.done = true;
    this.#woken();
  }

  /**
   * Ignore files in the directories from the top down to `dir` (relative to the top) that the
   * listing has not met (git prints no untracked file it ignores, a personal .ignore listed in
   * core.excludesFile among them): looked for on disk, once a directory. `early`: before any
   * chunk was handed out (none is stale for it).
   */
  probe(dir: string, early = false): boolean {
    let found = false;
    for (let at = dir; ; at = parentOf(at)) {
      if (!this.#probed.has(at)) {
        this.#probed.add(at);
        for (const name of IGNORE_FILES)
          if (!this.ruleDirs[at]?.includes(name) && existsSync(path.join(this.top, at, name)))
            found = this.noteRuleFile(at, name, !early) || found;
      }
      if (at === '') break;
    }
    return found;
  }

  /**
   * Lists with git: resolves true once git's index starts to come (or came empty), false when git
   * cannot list here (no repository, no git, a searched directory the rules leave out): the
   * search then walks. The index's paths are added as they come, then the untracked ones, until
   * `done`.
   */
  async fromGit(policy: ConfinePolicy, global: string): Promise<boolean> {
    this.#findRepositoryTop();
    this.probe(this.base, true);
    if (this.base && this.#leftOut(policy, global)) return false;
    let first = true;
    let started: () => void = () => undefined;
    const coming = new Promise<null>((resolve) => (started = () => resolve(null)));
    const index = gitPaths(this.dir, ['ls-files', '-z', '--cached'], (p) => {
      if (first) {
        first = false;
        started();
      }
      this.add(p, true);
    });
    this.#runs.push(index);
    const end = await Promise.race([index.done, coming]);
    if (end && end.code !== 0) {
      this.stop();
      return false;
    }
    this.inRepo = true;
    // The untracked files come after the index: git walks the whole directory for them, which
    // would take the cores from the first files' search (and they are searched last anyway).
    void index.done.then(async () => {
      this.indexDone = true;
      if (this.#stopped) return this.finish();
      const untracked = gitPaths(
        this.dir,
        ['ls-files', '-z', '--others', '--exclude-standard'],
        (p) => this.add(p, true),
      );
      this.#runs.push(untracked);
      void untracked.stuck.then((isStuck) => (this.stuck ||= isStuck));
      this.warnings += (await untracked.done).stderr;
      this.finish();
    });
    return true;
  }

  /** The repository top at or below the top, found as git finds it: the nearest `.git` up. */
  #findRepositoryTop(): void {
    for (let rel = this.base; ; rel = parentOf(rel)) {
      if (existsSync(path.join(this.top, rel, '.git'))) {
        this.repos.push(rel);
        return;
      }
      if (rel === '') return;
    }
  }

  /** True when the rules leave the searched directory out (ripgrep searches it, named). */
  #leftOut(policy: ConfinePolicy, global: string): boolean {
    // Hidden or not: a directory named as the path is searched.
    const rules = { dirs: this.ruleDirs, repos: this.repos, inRepo: true, global, hidden: true };
    return !new SearchRules(this.top, '', rules, policy).entersDir(this.base);
  }

  /**
   * Directories (relative to the searched one, '' for all of it) where git's listing may have
   * missed files, to be walked too: where a .ignore or .rgignore file keeps something back with a
   * `!` rule (git knows no such file), or everywhere when git got stuck.
   */
  kept(policy: ConfinePolicy): string[] {
    // git stuck on an ignore file that is a FIFO: the untracked files are walked for.
    if (this.stuck) return [''];
    const dirs: string[] = [];
    for (const [dir, names] of Object.entries(this.ruleDirs)) {
      const own = names.filter((name) => name !== '.gitignore');
      if (!own.some((name) => hasNegation(readIgnoreFile(path.join(this.top, dir, name), policy))))
        continue;
      const base = this.base;
      if (base === '' || dir === base || dir.startsWith(`${base}/`))
        dirs.push(base === '' ? dir : dir.slice(base.length + 1));
      else if (base.startsWith(dir ? `${dir}/` : '')) dirs.push('');
    }
    return dirs.includes('')
      ? ['']
      : dirs.filter((d) => !dirs.some((o) => o !== d && d.startsWith(`${o}/`)));
  }

  /** Stops git (the search ended early). */
  stop(): void {
    this.#stopped = true;
    for (const run of this.#runs) run.stop();
  }
}
