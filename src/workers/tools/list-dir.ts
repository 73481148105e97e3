import { readlink } from 'node:fs/promises';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { capOutput } from './output.ts';
import { done, fail } from './result.ts';
import { isRefused, refusal, resolvePath } from './sandbox.ts';
import { walk } from './walk.ts';

const MAX_ENTRIES = 2000;

/** `list_dir`: a tree of a directory, `.gitignore`-aware; directories end with "/". */
export const listDir = async (
  args: ToolArgs<'list_dir'>,
  context: ToolContext,
): Promise<ToolResult> => {
  const target = await resolvePath(args.path ?? '.', context, 'read');
  if (isRefused(target)) return target;
  if (!target.stats) return fail('not-found', `${target.display} does not exist`);
  if (!target.stats.isDirectory())
    return fail('invalid-args', `${target.display} is a file; use read_file or path_info`);
  const lines: string[] = [];
  let more = false;
  const entries = walk({
    root: target.root,
    start: target.real,
    maxDepth: args.depth ?? 1,
    hidden: args.hidden ?? false,
    policy: target.policy,
  });
  try {
    for (const entry of entries) {
      if (lines.length >= MAX_ENTRIES) {
        more = true;
        break;
      }
      const indent = '  '.repeat(entry.depth - 1);
      const { dirent } = entry;
      if (dirent.isSymbolicLink()) {
        const to = await readlink(entry.at).catch(() => '?');
        lines.push(`${indent}${dirent.name} -> ${to}`);
      } else lines.push(`${indent}${dirent.name}${dirent.isDirectory() ? '/' : ''}`);
    }
  } catch (error) {
    return refusal(error, target);
  }
  const header = `${target.display}/`;
  if (lines.length === 0) return done(`${header}\n(empty, or everything in it is ignored)`);
  const tail = more
    ? `\n(more than ${MAX_ENTRIES} entries; list a subdirectory or less depth)`
    : '';
  const { output, savedTo } = await capOutput(
    `${header}\n${lines.join('\n')}${tail}`,
    context,
    'list_dir',
  );
  return done(output, {
    ...(savedTo ? { savedTo } : {}),
    data: { entries: lines.length, truncated: more },
  });
};
