import path from 'node:path';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { countFdLines, readAt, readFd, streamLines } from '../shared/bounded-read.ts';
import { isRefused, openResolved, refusal, resolvePath } from './sandbox.ts';
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

/**
 * Lines `from`..`from+count-1` (1-based), streamed: lines before the page are only counted, and
 * memory holds one chunk and the page. With `countAll` the file's lines are counted too (on its
 * bytes); else reading stops after the page.
 */
const readPage = async (fd: number, from: number, count: number, countAll: boolean) => {
  const lines: string[] = [];
  let more = false;
  for await (const line of streamLines(fd, MAX_LINE + 1, from - 1)) {
    if (lines.length === count) {
      more = true;
      break;
    }
    lines.push(line.text);
  }
  // Past the end, the skipped lines were fewer than asked: count them to say how many there are.
  if (countAll || lines.length === 0) return { lines, total: await countFdLines(fd) };
  return { lines, total: more ? undefined : from - 1 + lines.length };
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

const page = async (
  fd: number,
  display: string,
  args: ToolArgs<'read_file'>,
  size: number,
  context: ToolContext,
): Promise<ToolResult> => {
  const from = args.offset ?? 1;
  const count = args.limit ?? DEFAULT_LIMIT;
  const { lines, total } = await readPage(fd, from, count, size <= context.limits.maxFileBytes);
  if (size === 0) return done(`(${display} is empty)`);
  if (lines.length === 0)
    return fail('invalid-args', `offset ${from} is past the end (${total ?? '?'} lines)`);
  const { text, shown } = format(lines, from, context.limits.maxChars);
  const last = from + shown - 1;
  const hasMore = total === undefined || last < total;
  const of = total === undefined ? '' : ` of ${total}`;
  const footer = hasMore ? `\n(lines ${from}-${last}${of}; continue with offset=${last + 1})` : '';
  return done(text + footer, { data: { path: display, from, to: last, total } });
};

/**
 * `read_file`: a page of a text file with line numbers; images as image content. The file is
 * opened by descriptor and checked again there, and read in bounded pieces whatever its size.
 */
export const readFile = async (
  args: ToolArgs<'read_file'>,
  context: ToolContext,
): Promise<ToolResult> => {
  const target = await resolvePath(args.path, context, 'read');
  if (isRefused(target)) return target;
  if (!target.stats) return fail('not-found', `${target.display} does not exist; try glob first`);
  if (target.stats.isDirectory())
    return fail('invalid-args', `${target.display} is a directory; use list_dir to see it`);
  const file = openResolved(target);
  if (isRefused(file)) return file;
  try {
    const { size } = file.stats;
    const mimeType = IMAGES[path.extname(target.real).toLowerCase()];
    if (mimeType && size <= context.limits.maxFileBytes) {
      const data = (await readFd(file.fd, context.limits.maxFileBytes, target.display)).toString(
        'base64',
      );
      return done(`${target.display}: ${mimeType} image, ${size} bytes`, {
        content: [{ type: 'image', data, mimeType }],
      });
    }
    if ((await readAt(file.fd, 8192, 0)).includes(0))
      return fail(
        'invalid-args',
        `${target.display} is a binary file (${size} bytes); inspect it with bash, e.g. \`file\` or \`xxd | head\``,
      );
    return await page(file.fd, target.display, args, size, context);
  } catch (error) {
    return refusal(error, target);
  } finally {
    file.close();
  }
};
