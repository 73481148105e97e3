import path from 'node:path';
import v8 from 'node:v8';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { readAt, streamLines } from '../shared/bounded-read.ts';
import { ConfinedError, type ConfinePolicy } from '../shared/confine.ts';
import { openConfinedFile } from '../shared/confined-open.ts';
import { globMatcher, namesDotfiles, stoppedNote } from './glob.ts';
import { capOutput } from './output.ts';
import type { ToolIo } from './registry.ts';
import { done, fail, messageOf } from './result.ts';
import { displayPath, isRefused, refusal, resolvePath } from './sandbox.ts';
import { walk } from './walk.ts';

// A regular expression that backtracks without end (nested quantifiers such as /(a+)+$/) switches
// to V8's linear-time engine instead of tying the thread up; patterns that engine cannot run
// (backreferences, lookaround) are ended by the pool's time limit (tools.searchLimits.timeout).
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

const MAX_MATCHES = 500;
const MAX_LINE = 300;
/** Characters of one line searched; the rest of a longer line (minified code) is not. */
const MAX_SCAN_LINE = 256 * 1024;

/** What one grep call has found and spent so far. */
interface Scan {
  regex: RegExp;
  lines: string[];
  matches: number;
  files: number;
  bytes: number;
  tooLarge: number;
  longLines: boolean;
  /** Why the scan stopped early: a limit's note. */
  stopped?: string;
}

const searchFile = async (
  file: string,
  shown: string,
  policy: ConfinePolicy,
  context: ToolContext,
  scan: Scan,
): Promise<void> => {
  let opened;
  try {
    opened = openConfinedFile(file, policy, { shown, noFollow: true });
  } catch (error) {
    if (error instanceof ConfinedError) return; // symlinks, FIFOs, hard links: never searched
    throw error;
  }
  try {
    const { size } = opened.stats;
    if (size > context.limits.maxFileBytes) return void scan.tooLarge++;
    if (scan.bytes + size > context.limits.searchMaxBytes) {
      scan.stopped = `\n(stopped after reading ${scan.bytes} bytes, the tools.searchLimits.maxBytes limit; narrow the path or glob)`;
      return;
    }
    scan.bytes += size;
    if ((await readAt(opened.fd, 8192, 0)).includes(0)) return;
    for await (const line of streamLines(opened.fd, MAX_SCAN_LINE)) {
      if (line.cut) scan.longLines = true;
      if (!scan.regex.test(line.text)) continue;
      if (++scan.matches > MAX_MATCHES) {
        scan.stopped = `\n(more than ${MAX_MATCHES} matches; only the first ${MAX_MATCHES} are shown. Narrow the pattern, path or glob)`;
        return;
      }
      const text = line.text.length > MAX_LINE ? `${line.text.slice(0, MAX_LINE)}…` : line.text;
      scan.lines.push(`${shown}:${line.n}: ${text}`);
    }
  } finally {
    opened.close();
  }
};

const compile = (args: ToolArgs<'grep'>): RegExp | ToolResult => {
  try {
    return new RegExp(args.pattern, args.ignoreCase ? 'i' : '');
  } catch (error) {
    return fail(
      'invalid-args',
      `pattern is not a valid JavaScript regular expression: ${messageOf(error)}`,
    );
  }
};

/**
 * `grep`: lines matching a regular expression, as "path:line: text", `.gitignore`-aware. Files
 * are searched as the walk finds them, a line at a time, and the search stops at the first limit
 * met: 500 matches, `limits.searchMaxFiles` entries, `limits.searchMaxBytes` bytes.
 */
export const grep = async (
  args: ToolArgs<'grep'>,
  context: ToolContext,
  io: ToolIo,
): Promise<ToolResult> => {
  const regex = compile(args);
  if (!(regex instanceof RegExp)) return regex;
  const target = await resolvePath(args.path ?? '.', context, 'read');
  if (isRefused(target)) return target;
  if (!target.stats) return fail('not-found', `${target.display} does not exist`);
  const scan: Scan = {
    regex,
    lines: [],
    matches: 0,
    files: 0,
    bytes: 0,
    tooLarge: 0,
    longLines: false,
  };
  const shownOf = (real: string) => displayPath(real, target.root).split(path.sep).join('/');
  try {
    if (target.stats.isFile())
      await searchFile(target.real, shownOf(target.real), target.policy, context, scan);
    else {
      const isMatch = args.glob ? globMatcher(args.glob) : () => true;
      const hidden = args.glob ? namesDotfiles(args.glob) : false;
      const { root, real: start, policy } = target;
      for await (const entry of walk({ root, start, maxDepth: 64, hidden, policy })) {
        if (io.signal.aborted) return fail('canceled', 'grep was canceled');
        if (++scan.files > context.limits.searchMaxFiles)
          scan.stopped = stoppedNote(context.limits.searchMaxFiles);
        if (scan.stopped) break;
        if (!entry.dirent.isFile() || !isMatch(entry.rel)) continue;
        await searchFile(entry.at, shownOf(entry.abs), policy, context, scan);
      }
    }
  } catch (error) {
    return refusal(error, target);
  }
  return report(args, target.display, scan, context);
};

const report = async (
  args: ToolArgs<'grep'>,
  display: string,
  scan: Scan,
  context: ToolContext,
): Promise<ToolResult> => {
  const notes = [
    scan.tooLarge > 0
      ? `\n(${scan.tooLarge} files over ${context.limits.maxFileBytes} bytes were not searched)`
      : '',
    scan.longLines
      ? `\n(lines longer than ${MAX_SCAN_LINE} characters were searched in their first ${MAX_SCAN_LINE} only)`
      : '',
    scan.stopped ?? '',
  ].join('');
  const count = Math.min(scan.matches, MAX_MATCHES);
  if (count === 0)
    return done(`No lines match /${args.pattern}/ in ${display}.${notes}`, { data: { count: 0 } });
  const { output, savedTo } = await capOutput(scan.lines.join('\n') + notes, context, 'grep');
  return done(output, {
    ...(savedTo ? { savedTo } : {}),
    data: { count, files: scan.files, truncated: scan.stopped !== undefined },
  });
};
