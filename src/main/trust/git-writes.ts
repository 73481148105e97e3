// Which git commands in a shell line write git's state. Inside bash's sandbox every `.git` of the
// workspace is read-only (the mount is what protects it); this only lets niffler ask before a
// command that needs to write there runs, instead of after it failed. A command it does not
// recognise as a git write still meets the read-only mount.

/** Subcommands that only read, whatever their arguments. */
const READS = new Set([
  'status',
  'log',
  'diff',
  'show',
  'blame',
  'annotate',
  'grep',
  'ls-files',
  'ls-tree',
  'ls-remote',
  'rev-parse',
  'rev-list',
  'cat-file',
  'describe',
  'shortlog',
  'show-ref',
  'for-each-ref',
  'name-rev',
  'merge-base',
  'whatchanged',
  'help',
  'version',
  'var',
  'check-ignore',
  'check-attr',
  'check-ref-format',
  'count-objects',
  'diff-tree',
  'diff-files',
  'diff-index',
  'range-diff',
  'cherry',
  'verify-commit',
  'verify-tag',
  'archive',
]);

/** Subcommands that read with these first arguments (or none), and write otherwise. */
const READS_WHEN: Record<string, (args: string[]) => boolean> = {
  branch: (a) =>
    a.every((x) =>
      /^(-a|--all|-r|--remotes|-l|--list|-v|-vv|--verbose|--show-current|--contains|--no-contains|--merged|--no-merged|--points-at|--sort=.*|--format=.*|--color.*|--no-color|--column.*)$/.test(
        x,
      ),
    ) || a.some((x) => x === '--list' || x === '-l' || x === '--show-current'),
  tag: (a) => a.length === 0 || a.some((x) => x === '-l' || x === '--list'),
  remote: (a) => a.length === 0 || /^(-v|--verbose|show|get-url)$/.test(a[0]!),
  config: (a) =>
    a.some((x) =>
      /^(--get|--get-all|--get-regexp|--get-urlmatch|--list|-l|--get-color|--get-colorbool)$/.test(
        x,
      ),
    ),
  stash: (a) => /^(list|show)$/.test(a[0] ?? ''),
  worktree: (a) => a[0] === 'list',
  submodule: (a) => /^(status|summary)$/.test(a[0] ?? '') || a.length === 0,
  reflog: (a) => a.length === 0 || a[0] === 'show',
  notes: (a) => a.length === 0 || /^(list|show)$/.test(a[0]!),
  'symbolic-ref': (a) => a.filter((x) => !x.startsWith('-')).length === 1,
};

/** git's options that come before the subcommand and take the next word as their value. */
const WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path']);

/** A shell line cut into simple commands, each into words (quotes removed, roughly). */
const commands = (line: string): string[][] =>
  line
    .split(/\|\||&&|[;|&\n(){}`]|\$\(/)
    .map((part) =>
      [...part.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)].map(
        (m) => m[1] ?? m[2] ?? m[3] ?? '',
      ),
    )
    .filter((words) => words.length > 0);

const isGit = (word: string): boolean => word === 'git' || word.endsWith('/git');

/** `git SUB args`, from the words after `git`: its subcommand and arguments. */
const subcommand = (words: string[]): { sub: string; args: string[] } | undefined => {
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (WITH_VALUE.has(word)) {
      i++;
      continue;
    }
    if (word.startsWith('-')) continue;
    return { sub: word, args: words.slice(i + 1) };
  }
  return undefined;
};

/**
 * The first git command of `line` that writes git's state (`git commit`, `git checkout`, `git
 * config core.x y`…), as written; undefined when none does. Unknown subcommands and aliases
 * count as writes.
 */
export const gitWriteIn = (line: string): string | undefined => {
  for (const words of commands(line)) {
    const at = words.findIndex(isGit);
    if (at < 0) continue;
    const found = subcommand(words.slice(at + 1));
    if (!found) continue;
    const { sub, args } = found;
    if (READS.has(sub)) continue;
    if (READS_WHEN[sub]?.(args)) continue;
    return `git ${sub}`;
  }
  return undefined;
};

/** Whether a shell line names a `.git` path (`.git`, `sub/.git/config`, `cd .git`). */
export const namesGitDir = (line: string): boolean =>
  /(^|[\s/'"=:])\.git($|[\s/'";|&)])/.test(line);
