import ignore, { type Ignore } from 'ignore';

// Which files a search skips, decided as ripgrep decides it (its `ignore` crate): the ignore files
// of each directory — .rgignore, .ignore, .gitignore, and .git/info/exclude on a repository's
// top — then core.excludesFile, then hidden names. Pure: the files are read by whoever builds the
// chain (the walker, the scan of a chunk).

/** The names of the ignore files a directory may have, in ripgrep's order of precedence. */
export const IGNORE_FILES = ['.rgignore', '.ignore', '.gitignore'] as const;

/** What a rule says of a path: skip it, keep it (a `!` rule), or nothing. */
export type Match = 'ignore' | 'whitelist' | undefined;

/** The rules of one directory, by the file they came from. */
export interface DirRules {
  rgignore?: Ignore;
  ignore?: Ignore;
  gitignore?: Ignore;
  /** `.git/info/exclude`, on a repository's top directory. */
  exclude?: Ignore;
  /** The directory is a repository's top: git's rules above it do not reach into it. */
  repo?: boolean;
}

/** A directory of a chain: its path relative to the chain's top ('' for the top) and its rules. */
export interface ChainLink {
  rel: string;
  rules: DirRules | null;
}

/** What holds for a whole search. */
export interface RuleContext {
  /** The chain's top is inside a git repository: .gitignore files apply (as in ripgrep). */
  inRepo: boolean;
  /** core.excludesFile's rules. */
  global?: Ignore | undefined;
  /** Keep hidden files and directories (names starting with "."). */
  hidden: boolean;
}

/** Rules from the text of an ignore file, or undefined when it has none. Case matters, as in git. */
export const parseRules = (text: string): Ignore | undefined => {
  if (!/^\s*[^#\s]/m.test(text)) return undefined;
  return ignore({ ignorecase: false }).add(text);
};

/** True when an ignore file's text has a `!` rule (it may keep what git leaves out). */
export const hasNegation = (text: string): boolean => /^!/m.test(text);

/** The `ignore` package's rule list, which tests one path without its parent directories. */
interface RuleList {
  test(path: string, mode: 'regex'): { ignored: boolean; unignored: boolean };
}

/**
 * What the last rule matching `path` itself says. The walk decides each directory on the way, so
 * the rules are asked about the path alone — `ignore`'s rule list (its `.test()` would also test
 * every parent, and cache every answer). Its public `checkIgnore` is the fallback should a later
 * version of the package change the list's shape.
 */
const matchOne = (rules: Ignore, path: string): { ignored: boolean; unignored: boolean } => {
  const list = (rules as unknown as { _rules?: Partial<RuleList> })._rules;
  return typeof list?.test === 'function' ? list.test(path, 'regex') : rules.checkIgnore(path);
};

const test = (rules: Ignore | undefined, sub: string, isDir: boolean): Match => {
  if (!rules || sub === '') return undefined;
  const result = matchOne(rules, isDir ? `${sub}/` : sub);
  return result.ignored ? 'ignore' : result.unignored ? 'whitelist' : undefined;
};

/** `rel` relative to the chain link at `base` ('' for the top). */
const below = (rel: string, base: string): string =>
  base === '' ? rel : rel.slice(base.length + 1);

/**
 * What the ignore files say of `rel` (relative to the chain's top), given its ancestors' rules
 * `chain`, top first. Per kind, the nearest directory with a rule that matches decides (the last
 * such rule in its file); .rgignore wins over .ignore over .gitignore over .git/info/exclude over
 * core.excludesFile; git's kinds apply inside a repository only and stop at its top.
 */
export const ruleMatch = (
  chain: readonly ChainLink[],
  rel: string,
  isDir: boolean,
  context: RuleContext,
): Match => {
  let rg: Match, own: Match, git: Match, exclude: Match;
  const anyGit = context.inRepo || chain.some((link) => link.rules?.repo);
  let sawGit = false;
  let repoTop = '';
  for (let i = chain.length - 1; i >= 0; i--) {
    const { rel: base, rules } = chain[i]!;
    if (!rules) continue;
    const sub = below(rel, base);
    rg ??= test(rules.rgignore, sub, isDir);
    own ??= test(rules.ignore, sub, isDir);
    if (anyGit && !sawGit) {
      git ??= test(rules.gitignore, sub, isDir);
      exclude ??= test(rules.exclude, sub, isDir);
    }
    if (rules.repo && !sawGit) {
      sawGit = true;
      repoTop = base;
    }
  }
  const found = rg ?? own ?? git ?? exclude;
  if (found || !anyGit) return found;
  return test(context.global, below(rel, repoTop), isDir);
};

/** The last name of a `/`-separated path. */
export const baseName = (rel: string): string => rel.slice(rel.lastIndexOf('/') + 1);

/** True when ripgrep would skip `rel`: an ignore rule says so, or it is hidden and none keeps it. */
export const isSkipped = (
  chain: readonly ChainLink[],
  rel: string,
  isDir: boolean,
  context: RuleContext,
): boolean => {
  const match = ruleMatch(chain, rel, isDir, context);
  if (match) return match === 'ignore';
  return !context.hidden && baseName(rel).startsWith('.');
};
