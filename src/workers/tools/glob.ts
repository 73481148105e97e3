import picomatch from 'picomatch';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { capOutput } from './output.ts';
import { done, fail } from './result.ts';
import { isRefused, resolvePath } from './sandbox.ts';
import { walk } from './walk.ts';

const MAX_RESULTS = 1000;
const MAX_DEPTH = 64;

/**
 * Matcher for paths relative to the search directory. A pattern without "/" matches names at any
 * depth (as ripgrep's --glob does); dotfiles match only when the pattern names the dot.
 */
export const globMatcher = (pattern: string): ((rel: string) => boolean) =>
  picomatch(pattern, { dot: false, basename: !pattern.includes('/') });

/** True when the pattern can match a dotfile or a path through a dot directory. */
export const namesDotfiles = (pattern: string): boolean => /(^|\/|\{|,)\./.test(pattern);

/** `glob`: files under a directory matching a pattern, `.gitignore`-aware, sorted by path. */
export const glob = async (args: ToolArgs<'glob'>, context: ToolContext): Promise<ToolResult> => {
  const target = await resolvePath(args.path ?? '.', context, 'read');
  if (isRefused(target)) return target;
  if (!target.stats?.isDirectory())
    return fail('not-found', `${target.display} is not a directory; pass a directory as path`);
  const isMatch = globMatcher(args.pattern);
  const matches: string[] = [];
  let more = 0;
  const hidden = namesDotfiles(args.pattern);
  for await (const entry of walk({
    root: target.root,
    start: target.real,
    maxDepth: MAX_DEPTH,
    hidden,
  })) {
    if (entry.dirent.isDirectory() || !isMatch(entry.rel)) continue;
    if (matches.length < MAX_RESULTS) matches.push(entry.rel);
    else more++;
  }
  if (matches.length === 0)
    return done(`No files match ${JSON.stringify(args.pattern)} in ${target.display}.`, {
      data: { count: 0 },
    });
  const prefix = target.display === '.' ? '' : `${target.display}/`;
  const note = more > 0 ? `\n(${more} more matches not shown; use a narrower pattern)` : '';
  const text = matches.map((rel) => prefix + rel).join('\n') + note;
  const { output, savedTo } = await capOutput(text, context, 'glob');
  return done(output, { ...(savedTo ? { savedTo } : {}), data: { count: matches.length + more } });
};
