import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { createTwoFilesPatch } from 'diff';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { writeAtomic } from './atomic.ts';
import { capOutput } from './output.ts';
import { done, fail } from './result.ts';
import { isRefused, resolvePath } from './sandbox.ts';

/** Every index at which `needle` starts in `text` (non-overlapping). */
const indexesOf = (text: string, needle: string): number[] => {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    found.push(at);
  return found;
};

const lineAt = (text: string, index: number): number => text.slice(0, index).split('\n').length;

const readText = async (file: string, maxBytes: number): Promise<string | null> => {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    if ((await handle.stat()).size > maxBytes) return null;
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
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
  const before = await readText(target.real, context.limits.maxFileBytes);
  if (before === null)
    return fail('too-large', `${target.display} is over ${context.limits.maxFileBytes} bytes`);
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
  await writeAtomic(target.real, after, target.stats.mode & 0o7777);
  const diff = createTwoFilesPatch(`a/${target.display}`, `b/${target.display}`, before, after);
  const patch = diff.slice(diff.indexOf('--- '));
  const { output, savedTo } = await capOutput(patch, context, 'edit_file');
  return done(output, {
    ...(savedTo ? { savedTo } : {}),
    data: { path: target.display, replacements: found.length },
  });
};
