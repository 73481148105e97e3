import ignore, { type Ignore } from 'ignore';

// Which files a search skips, decided as ripgrep decides it (its `ignore` crate): the ignore files
// of each directory — .rgignore, .ignore, .gitignore, and .git/info/exclude on a repository's
// top — then core.excludesFile, then hidden names. Pure: the files are read by whoever builds the
// chain (the walker, the scan of a chunk).

/** The names of the ignore files a directory may have, in ripgrep's order of precedence. */
export const IGNORE_FILES = ['.rgignore', '.ignore', '.gitignore'] as const;

/** What a rule says of a path: skip it, keep it (a `!` rule), or nothing. */
type Match = 'ignore' | 'whitelist' | undefined;

/** The rules of one directory, by the file they came from. */
export interface DirRules {
  rgignore?: RuleSet;
  ignore?: RuleSet;
  gitignore?: RuleSet;
  /** `.git/info/exclude`, on a repository's top directory. */
  exclude?: RuleSet;
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
  global?: RuleSet | undefined;
  /** Keep hidden files and directories (names starting with "."). */
  hidden: boolean;
}

/** One compiled rule of the `ignore` package: its regex, and whether it matches names alone. */
interface CompiledRule {
  regex: RegExp;
  negative: boolean;
  _basenameOnly: boolean;
}

/**
 * The rules of one ignore file, asked about one path at a time: the last rule that matches the
 * path itself says (the walk decides each directory on the way, so parents are not asked).
 * Most rules match names alone (`node_modules`, `*.log`); which of those matches a name is kept
 * per name (a tree repeats `index.js` and `package.json` thousands of times), and only the
 * rules with a path in them are run on each path. The `ignore` package compiles the rules; its
 * rule list is read for that, its public `checkIgnore` taken instead should a later version
 * change the list's shape.
 */
class RuleSet {
  readonly #rules: CompiledRule[] | null;
  readonly #pathRules: number[] = [];
  readonly #byName = new Map<string, number>();

  constructor(private readonly ignore: Ignore) {
    const list = (ignore as unknown as { _rules?: { _rules?: unknown } })._rules?._rules;
    const rules = Array.isArray(list) ? (list as CompiledRule[]) : null;
    this.#rules =
      rules && rules.every((r) => typeof r.negative === 'boolean' && r.regex instanceof RegExp)
        ? rules
        : null;
    this.#rules?.forEach((rule, i) => rule._basenameOnly || this.#pathRules.push(i));
  }

  /** What the last rule matching `path` ("dir/" for a directory) says of it. */
  match(path: string): Match {
    const rules = this.#rules;
    if (!rules) {
      const result = this.ignore.checkIgnore(path);
      return result.ignored ? 'ignore' : result.unignored ? 'whitelist' : undefined;
    }
    const name = nameOf(path);
    let last = this.#byName.get(name);
    if (last === undefined) {
      last = -1;
      for (let i = rules.length - 1; i >= 0; i--)
        if (rules[i]!._basenameOnly && rules[i]!.regex.test(name)) {
          last = i;
          break;
        }
      this.#byName.set(name, last);
    }
    for (let k = this.#pathRules.length - 1; k >= 0 && this.#pathRules[k]! > last; k--) {
      const rule = rules[this.#pathRules[k]!]!;
      if (rule.regex.test(path)) return rule.negative ? 'whitelist' : 'ignore';
    }
    if (last < 0) return undefined;
    return rules[last]!.negative ? 'whitelist' : 'ignore';
  }
}

/** The last name of a path, with its "/" for a directory ("a/b/" → "b/"). */
const nameOf = (path: string): string => {
  const end = path.length - 1;
  return path.slice(path.lastIndexOf('/', path[end] === '/' ? end - 1 : end) + 1);
};

/** Rules from the text of an ignore file, or undefined when it has none. Case matters, as in git. */
export const parseRules = (text: string): RuleSet | undefined => {
  if (!/^\s*[^#\s]/m.test(text)) return undefined;
  return new RuleSet(ignore({ ignorecase: false }).add(text));
};

/** True when an ignore file's text has a `!` rule (it may keep what git leaves out). */
export const hasNegation = (text: string): boolean => /^!/m.test(text);

const test = (rules: RuleSet | undefined, sub: string, isDir: boolean): Match =>
  rules && sub !== '' ? rules.match(isDir ? `${sub}/` : sub) : undefined;

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
