import path from 'node:path';
import { readFdSync } from '../../shared/bounded-read.ts';
import type { ConfinePolicy } from '../../shared/confine.ts';
import { openConfinedFile } from '../../shared/confined-open.ts';
import type { ScanRules } from '../../protocol/search.ts';
import { isSkipped, parseRules, type ChainLink, type DirRules, type RuleContext } from './rules.ts';

/** An ignore file larger than this is not read (a real one is a few KiB). */
const MAX_IGNORE_BYTES = 1024 * 1024;

/** An ignore file's text, or '' when it is missing, refused or unreadable. */
export const readIgnoreFile = (file: string, policy: ConfinePolicy): string => {
  try {
    const opened = openConfinedFile(file, policy);
    try {
      return readFdSync(opened.fd, MAX_IGNORE_BYTES, file).toString('utf8');
    } finally {
      opened.close();
    }
  } catch {
    // A missing, oversized or special (FIFO, /dev/zero) ignore file ignores nothing.
    return '';
  }
};

/**
 * The rules of the directories of one search, read once each, and the verdict on each directory
 * met (kept or skipped): what a scan thread keeps for the search while its chunks come.
 */
export class SearchRules {
  readonly #chains = new Map<string, ChainLink[]>();
  readonly #kept = new Map<string, boolean>();
  readonly #repos: Set<string>;
  readonly context: RuleContext;

  constructor(
    readonly top: string,
    readonly base: string,
    readonly rules: ScanRules,
    readonly policy: ConfinePolicy,
  ) {
    this.#repos = new Set(rules.repos);
    this.context = {
      inRepo: rules.inRepo,
      global: parseRules(rules.global),
      hidden: rules.hidden,
    };
  }

  #rulesOf(dir: string): DirRules | null {
    const names = this.rules.dirs[dir] ?? [];
    const repo = this.#repos.has(dir);
    if (names.length === 0 && !repo) return null;
    const at = path.join(this.top, dir);
    const read = (name: string) => parseRules(readIgnoreFile(path.join(at, name), this.policy));
    const rules: DirRules = { repo };
    if (names.includes('.rgignore')) rules.rgignore = read('.rgignore');
    if (names.includes('.ignore')) rules.ignore = read('.ignore');
    if (names.includes('.gitignore')) rules.gitignore = read('.gitignore');
    if (repo) rules.exclude = read('.git/info/exclude');
    return rules;
  }

  /** The rules of `dir` (relative to the top) and its ancestors, top first. */
  chain(dir: string): ChainLink[] {
    let chain = this.#chains.get(dir);
    if (chain) return chain;
    const parent = dir === '' ? [] : this.chain(parentOf(dir));
    const rules = this.#rulesOf(dir);
    chain = rules ? [...parent, { rel: dir, rules }] : parent;
    this.#chains.set(dir, chain);
    return chain;
  }

  /** True when ripgrep enters `dir` (relative to the top): it and every directory up to the base. */
  entersDir(dir: string): boolean {
    if (dir.length <= this.base.length) return true;
    let kept = this.#kept.get(dir);
    if (kept !== undefined) return kept;
    const parent = parentOf(dir);
    kept = this.entersDir(parent) && !isSkipped(this.chain(parent), dir, true, this.context);
    this.#kept.set(dir, kept);
    return kept;
  }

  /** True when ripgrep searches file `rel` (relative to the top). */
  keepsFile(rel: string): boolean {
    const dir = parentOf(rel);
    return this.entersDir(dir) && !isSkipped(this.chain(dir), rel, false, this.context);
  }
}

/** The directory of a "/"-separated relative path ('' at the top). */
export const parentOf = (rel: string): string => {
  const slash = rel.lastIndexOf('/');
  return slash < 0 ? '' : rel.slice(0, slash);
};
