import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { writeConfined } from '../shared/confined-write.ts';
import { done, fail } from './result.ts';
import { isRefused, refusal, resolvePath } from './sandbox.ts';

const lineCount = (text: string): number =>
  text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/**
 * `write_file`: creates or overwrites a file atomically, creating missing parent directories —
 * each step through a checked directory descriptor, never through a symlink.
 */
export const writeFile = async (
  args: ToolArgs<'write_file'>,
  context: ToolContext,
): Promise<ToolResult> => {
  const target = await resolvePath(args.path, context, 'write');
  if (isRefused(target)) return target;
  if (target.stats?.isDirectory())
    return fail('invalid-args', `${target.display} is a directory; give a file path`);
  let created: boolean;
  try {
    ({ created } = await writeConfined(target.real, args.content, target.policy, {
      shown: target.display,
    }));
  } catch (error) {
    return refusal(error, target);
  }
  const bytes = Buffer.byteLength(args.content);
  const verb = created ? 'Created' : 'Overwrote';
  return done(`${verb} ${target.display} (${lineCount(args.content)} lines, ${bytes} bytes).`, {
    data: { path: target.display, created, bytes },
  });
};
