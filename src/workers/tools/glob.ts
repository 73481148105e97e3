import picomatch from 'picomatch';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { capOutput } from './output.ts';
import { done, fail } from './result.ts';
import { isRefused, refusal, resolvePath } from './sandbox.ts';
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

/** The note for a walk stopped at `tools.searchLimits.maxFiles`. */
export const stoppedNote = (maxFiles: number): string =>
  `\n(stopped after ${maxFiles} entries, the tools.searchLimits.maxFiles limit; search a subdirectory ` +
  'or narrow the pattern)';

/**
 * `glob`: files under a directory matching a pattern, `.gitignore`-aware, sorted by path. The
 * walk streams and stops after `limits.searchMaxFiles` entries.
 */
export const glob = async (args: ToolArgs<'glob'>, context: ToolContext): Promise<ToolResult> => {
  const target = await resolvePath(args.path ?? '.', context, 'read');
  if (isRefused(target)) return target;
  if (!target.stats?.isDirectory())
    return fail('not-found', `${target.display} is not a directory; pass a directory as path`);
  const isMatch = globMatcher(args.pattern);
  const matches: string[] = [];
  let more = 0;
  let seen = 0;
  const { searchMaxFiles } = context.limits;
  const hidden = namesDotfiles(args.pattern);
  const { root, real: start, policy } = target;
  try {
    for await (const entry of walk({ root, start, maxDepth: MAX_DEPTH, hidden, policy })) {
      if (++seen > searchMaxFiles) break;
      if (entry.dirent.isDirectory() || !isMatch(entry.rel)) continue;
      if (matches.length < MAX_RESULTS) matches.push(entry.rel);
      else more++;
    }
  } catch (error) {
    return refusal(error, target);
  }
  const stopped = seen > searchMaxFiles ? stoppedNote(searchMaxFiles) : '';
  if (matches.length === 0)
    return done(`No files match ${JSON.stringify(args.pattern)} in ${target.display}.${stopped}`, {
      data: { count: 0 },
    });
  const prefix = target.display === '.' ? '' : `${target.display}/`;
  const note = more > 0 ? `\n(${more} more matches not shown; use a narrower pattern)` : '';
  const text = matches.map((rel) => prefix + rel).join('\n') + note + stopped;
  const { output, savedTo } = await capOutput(text, context, 'glob');
  return done(output, { ...(savedTo ? { savedTo } : {}), data: { count: matches.length + more } });
};
