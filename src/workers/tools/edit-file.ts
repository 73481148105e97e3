import { createTwoFilesPatch } from 'diff';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { readFd } from '../shared/bounded-read.ts';
import { writeConfined } from '../shared/confined-write.ts';
import { capOutput } from './output.ts';
import { done, fail } from './result.ts';
import { isRefused, openResolved, refusal, resolvePath, type Resolved } from './sandbox.ts';

/** Every index at which `needle` starts in `text` (non-overlapping). */
const indexesOf = (text: string, needle: string): number[] => {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    found.push(at);
  return found;
};

const lineAt = (text: string, index: number): number => text.slice(0, index).split('\n').length;

/** The file's text, read through its checked descriptor and bounded; or the refusal. */
const readText = async (target: Resolved, maxBytes: number): Promise<string | ToolResult> => {
  const file = openResolved(target);
  if (isRefused(file)) return file;
  try {
    return (await readFd(file.fd, maxBytes, target.display)).toString('utf8');
  } catch (error) {
    return refusal(error, target);
  } finally {
    file.close();
  }
};

/** `edit_file`: replaces exact text (once, or everywhere) and returns the unified diff. */
export const editFile = async (
  args: ToolArgs<'edit_file'>,
  context: ToolContext,
): Promise<ToolResult> => {
  if (args.oldText === '')
    return fail(
      'invalid-args',
      'oldText is empty; to create or replace a whole file use write_file',
    );
  if (args.oldText === args.newText)
    return fail('invalid-args', 'oldText and newText are the same; nothing to change');
  const target = await resolvePath(args.path, context, 'write');
  if (isRefused(target)) return target;
  if (!target.stats) return fail('not-found', `${target.display} does not exist; use write_file`);
  if (target.stats.isDirectory()) return fail('invalid-args', `${target.display} is a directory`);
  const before = await readText(target, context.limits.maxFileBytes);
  if (typeof before !== 'string') return before;
  let oldText = args.oldText;
  let newText = args.newText;
  if (!before.includes(oldText) && before.includes('\r\n') && !oldText.includes('\r')) {
    oldText = oldText.replace(/\n/g, '\r\n');
    newText = newText.replace(/\r?\n/g, '\r\n');
  }
  const found = indexesOf(before, oldText);
  if (found.length === 0)
    return fail(
      'not-found',
      `oldText was not found in ${target.display}. It must match exactly, including ` +
        'indentation and line breaks; read the file again and copy the text.',
    );
  if (found.length > 1 && !args.replaceAll)
    return fail(
      'conflict',
      `oldText occurs ${found.length} times in ${target.display} (lines ` +
        `${found.map((at) => lineAt(before, at)).join(', ')}); include more surrounding lines ` +
        'to make it unique, or pass replaceAll: true',
    );
  const after = before.split(oldText).join(newText);
  try {
    await writeConfined(target.real, after, target.policy, {
      shown: target.display,
      mode: target.stats.mode & 0o7777,
    });
  } catch (error) {
    return refusal(error, target);
  }
  const diff = createTwoFilesPatch(`a/${target.display}`, `b/${target.display}`, before, after);
  const patch = diff.slice(diff.indexOf('--- '));
  const { output, savedTo } = await capOutput(patch, context, 'edit_file');
  return done(output, {
    ...(savedTo ? { savedTo } : {}),
    data: { path: target.display, replacements: found.length },
  });
};
