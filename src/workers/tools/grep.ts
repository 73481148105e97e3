import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { globMatcher, namesDotfiles } from './glob.ts';
import { capOutput } from './output.ts';
import type { ToolIo } from './registry.ts';
import { done, fail, messageOf } from './result.ts';
import { displayPath, isRefused, resolvePath } from './sandbox.ts';
import { walk } from './walk.ts';

const MAX_MATCHES = 500;
const MAX_LINE = 300;

/** Lines of one regular, single-link, text file matching `regex`; null when skipped. */
const searchFile = async (file: string, regex: RegExp, maxBytes: number) => {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
  if (!handle) return null;
  try {
    const stats = await handle.stat();
    // A file with several hard links may share its content with a file outside the workspace.
    if (!stats.isFile() || stats.nlink > 1 || stats.size > maxBytes) return null;
    const buffer = await handle.readFile();
    if (buffer.subarray(0, 8192).includes(0)) return null;
    const hits: string[] = [];
    buffer
      .toString('utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!regex.test(line)) return;
        const text = line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line;
        hits.push(`${i + 1}: ${text}`);
      });
    return hits;
  } finally {
    await handle.close();
  }
};

/** `grep`: lines matching a regular expression, as "path:line: text", `.gitignore`-aware. */
export const grep = async (
  args: ToolArgs<'grep'>,
  context: ToolContext,
  io: ToolIo,
): Promise<ToolResult> => {
  let regex: RegExp;
  try {
    regex = new RegExp(args.pattern, args.ignoreCase ? 'i' : '');
  } catch (error) {
    return fail(
      'invalid-args',
      `pattern is not a valid JavaScript regular expression: ${messageOf(error)}`,
    );
  }
  const target = await resolvePath(args.path ?? '.', context, 'read');
  if (isRefused(target)) return target;
  if (!target.stats) return fail('not-found', `${target.display} does not exist`);
  const files: string[] = [];
  if (target.stats.isFile()) files.push(target.real);
  else {
    const isMatch = args.glob ? globMatcher(args.glob) : () => true;
    const hidden = args.glob ? namesDotfiles(args.glob) : false;
    for await (const entry of walk({ root: target.root, start: target.real, maxDepth: 64, hidden }))
      if (entry.dirent.isFile() && isMatch(entry.rel)) files.push(entry.abs);
  }
  const lines: string[] = [];
  let count = 0;
  for (const file of files) {
    if (io.signal.aborted) return fail('canceled', 'grep was canceled');
    const hits = await searchFile(file, regex, context.limits.maxFileBytes);
    if (!hits?.length) continue;
    const shown = displayPath(file, target.root).split(path.sep).join('/');
    for (const hit of hits) {
      if (count++ < MAX_MATCHES) lines.push(`${shown}:${hit}`);
    }
  }
  if (count === 0)
    return done(`No lines match /${args.pattern}/ in ${target.display}.`, { data: { count: 0 } });
  const note =
    count > MAX_MATCHES
      ? `\n(${count - MAX_MATCHES} more matches not shown; narrow the pattern, path or glob)`
      : '';
  const { output, savedTo } = await capOutput(lines.join('\n') + note, context, 'grep');
  return done(output, { ...(savedTo ? { savedTo } : {}), data: { count, files: files.length } });
};
