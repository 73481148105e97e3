import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { writeAtomic } from './atomic.ts';
import { done, fail } from './result.ts';
import { isRefused, resolvePath } from './sandbox.ts';

const lineCount = (text: string): number =>
  text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** `write_file`: creates or overwrites a file atomically, creating missing parent directories. */
export const writeFile = async (
  args: ToolArgs<'write_file'>,
  context: ToolContext,
): Promise<ToolResult> => {
  const target = await resolvePath(args.path, context, 'write');
  if (isRefused(target)) return target;
  if (target.stats?.isDirectory())
    return fail('invalid-args', `${target.display} is a directory; give a file path`);
  await mkdir(path.dirname(target.real), { recursive: true });
  const mode = target.stats ? target.stats.mode & 0o7777 : 0o644;
  await writeAtomic(target.real, args.content, mode);
  const bytes = Buffer.byteLength(args.content);
  const verb = target.stats ? 'Overwrote' : 'Created';
  return done(`${verb} ${target.display} (${lineCount(args.content)} lines, ${bytes} bytes).`, {
    data: { path: target.display, created: !target.stats, bytes },
  });
};
