import picomatch from 'picomatch';
import type { ScanChunk, ScanPattern } from '../../protocol/search.ts';
import type { ToolArgs } from '../../protocol/tools.ts';
import { FILE_TYPES } from './file-types.ts';
import { compileMatcher } from './matcher.ts';

/** One search, from a grep's or a glob's arguments. */
export interface SearchSpec {
  tool: 'grep' | 'glob';
  path: string;
  /** grep's pattern; absent for glob. */
  pattern?: ScanPattern;
  /** glob's pattern, or grep's glob and type: which listed files are looked at. */
  keep: (rel: string) => boolean;
  /** Walk hidden files and directories (a glob naming a dotfile). */
  hidden: boolean;
  mode: ScanChunk['mode'];
  before: number;
  after: number;
  lineNumbers: boolean;
  headLimit: number | undefined;
  offset: number;
  /** How the answer names what was looked for. */
  what: string;
}

/**
 * Matcher for paths relative to the searched directory. A pattern without "/" matches names at
 * any depth (as ripgrep's --glob does). Hidden paths are the ignore rules' to decide (skipped
 * unless a rule keeps them, or the pattern names a dot), so the pattern matches them too.
 */
const globMatcher = (pattern: string): ((rel: string) => boolean) =>
  picomatch(pattern, { dot: true, basename: !pattern.includes('/') });

/** True when the pattern can match a dotfile or a path through a dot directory. */
const namesDotfiles = (pattern: string): boolean => /(^|\/|\{|,)\./.test(pattern);

/** grep's `glob`: "!" in front leaves the files it matches out. */
const fileFilter = (glob: string): ((rel: string) => boolean) => {
  if (!glob.startsWith('!')) return globMatcher(glob);
  const matches = globMatcher(glob.slice(1));
  return (rel) => !matches(rel);
};

const typeFilter = (type: string): ((rel: string) => boolean) | string => {
  const globs = FILE_TYPES[type.toLowerCase()];
  if (!globs)
    return `type "${type}" is not known; known types: ${Object.keys(FILE_TYPES).join(', ')}; or use glob instead`;
  const matches = picomatch([...globs], { basename: true, dot: true });
  return (rel) => matches(rel);
};

/** A grep's arguments as a search, or the message for an invalid one. */
export const grepSpec = (args: ToolArgs<'grep'>): SearchSpec | string => {
  const pattern: ScanPattern = {
    pattern: args.pattern,
    ignoreCase: args['-i'] ?? args.ignoreCase ?? false,
    multiline: args.multiline ?? false,
  };
  const compiled = compileMatcher(pattern);
  if ('error' in compiled)
    return `pattern is not a valid JavaScript regular expression: ${compiled.error}`;
  const filters: ((rel: string) => boolean)[] = [];
  if (args.glob) filters.push(fileFilter(args.glob));
  if (args.type) {
    const filter = typeFilter(args.type);
    if (typeof filter === 'string') return filter;
    filters.push(filter);
  }
  const context = args['-C'] ?? 0;
  return {
    tool: 'grep',
    path: args.path ?? '.',
    pattern,
    keep: (rel) => filters.every((filter) => filter(rel)),
    hidden: args.glob ? namesDotfiles(args.glob.replace(/^!/, '')) : false,
    mode: args.output_mode ?? 'content',
    before: args['-B'] ?? context,
    after: args['-A'] ?? context,
    lineNumbers: args['-n'] ?? true,
    headLimit: args.head_limit || undefined,
    offset: args.offset ?? 0,
    what: `/${args.pattern}/`,
  };
};

/** A glob's arguments as a search. */
export const globSpec = (args: ToolArgs<'glob'>): SearchSpec => ({
  tool: 'glob',
  path: args.path ?? '.',
  keep: globMatcher(args.pattern),
  hidden: namesDotfiles(args.pattern),
  mode: 'stat',
  before: 0,
  after: 0,
  lineNumbers: false,
  headLimit: args.head_limit || undefined,
  offset: args.offset ?? 0,
  what: JSON.stringify(args.pattern),
});
