import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { isRefused, resolvePath } from './sandbox.ts';
import { done, fail } from './result.ts';

const DEFAULT_LIMIT = 2000;
const MAX_LINE = 2000;
const IMAGES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

const isBinary = async (handle: FileHandle): Promise<boolean> => {
  const { buffer, bytesRead } = await handle.read(Buffer.alloc(8192), 0, 8192, 0);
  return buffer.subarray(0, bytesRead).includes(0);
};

/** Lines `from`..`from+count-1` (1-based) of a file too large to hold, read as a stream. */
const streamLines = async (handle: FileHandle, from: number, count: number) => {
  const lines: string[] = [];
  let n = 0;
  let more = false;
  const reader = createInterface({
    input: handle.createReadStream({ start: 0, autoClose: false }),
  });
  for await (const line of reader) {
    n++;
    if (n < from) continue;
    if (lines.length === count) {
      more = true;
      break;
    }
    lines.push(line);
  }
  reader.close();
  return { lines, total: more ? undefined : n };
};

const format = (lines: string[], from: number, maxChars: number) => {
  let text = '';
  let shown = 0;
  for (const line of lines) {
    const cut = line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}… [line cut]` : line;
    const numbered = `${String(from + shown).padStart(6)}\t${cut}\n`;
    if (shown > 0 && text.length + numbered.length > maxChars) break;
    text += numbered;
    shown++;
  }
  return { text, shown };
};

/** `read_file`: a page of a text file with line numbers; images as image content. */
export const readFile = async (
  args: ToolArgs<'read_file'>,
  context: ToolContext,
): Promise<ToolResult> => {
  const target = await resolvePath(args.path, context, 'read');
  if (isRefused(target)) return target;
  if (!target.stats) return fail('not-found', `${target.display} does not exist; try glob first`);
  if (target.stats.isDirectory())
    return fail('invalid-args', `${target.display} is a directory; use list_dir to see it`);
  const handle = await open(target.real, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const size = (await handle.stat()).size;
    const mimeType = IMAGES[path.extname(target.real).toLowerCase()];
    if (mimeType && size <= context.limits.maxFileBytes) {
      const data = (await handle.readFile()).toString('base64');
      return done(`${target.display}: ${mimeType} image, ${size} bytes`, {
        content: [{ type: 'image', data, mimeType }],
      });
    }
    if (await isBinary(handle))
      return fail(
        'invalid-args',
        `${target.display} is a binary file (${size} bytes); inspect it with bash, e.g. \`file\` or \`xxd | head\``,
      );
    const from = args.offset ?? 1;
    const count = args.limit ?? DEFAULT_LIMIT;
    let lines: string[];
    let total: number | undefined;
    if (size <= context.limits.maxFileBytes) {
      const all = (await handle.readFile('utf8')).split('\n');
      if (all.at(-1) === '') all.pop();
      lines = all.slice(from - 1, from - 1 + count);
      total = all.length;
    } else {
      ({ lines, total } = await streamLines(handle, from, count));
    }
    if (size === 0) return done(`(${target.display} is empty)`);
    if (lines.length === 0)
      return fail('invalid-args', `offset ${from} is past the end (${total ?? '?'} lines)`);
    const { text, shown } = format(lines, from, context.limits.maxChars);
    const last = from + shown - 1;
    const hasMore = total === undefined || last < total;
    const of = total === undefined ? '' : ` of ${total}`;
    const footer = hasMore
      ? `\n(lines ${from}-${last}${of}; continue with offset=${last + 1})`
      : '';
    return done(text + footer, { data: { path: target.display, from, to: last, total } });
  } finally {
    await handle.close();
  }
};
