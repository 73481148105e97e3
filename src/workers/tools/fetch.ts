import TurndownService from 'turndown';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { capOutput } from './output.ts';
import type { ToolIo } from './registry.ts';
import { done, fail, messageOf } from './result.ts';

const TIMEOUT_MS = 30_000;
const MAX_BYTES = 5 * 1024 * 1024;
const TEXT = /^(text\/|application\/(json|xml|javascript|[a-z.+-]*\+(json|xml))|image\/svg\+xml)/;

/** Reads at most `max` bytes of a body; `cut` tells whether more followed. */
const readCapped = async (response: Response, max: number) => {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done: finished, value } = await reader.read();
      if (finished) break;
      if (size + value.length > max) {
        chunks.push(value.subarray(0, max - size));
        cut = true;
        await reader.cancel();
        break;
      }
      chunks.push(value);
      size += value.length;
    }
  }
  return { text: Buffer.concat(chunks).toString('utf8'), cut };
};

let turndown: TurndownService | undefined;

/** HTML as markdown; the converter is built on first use and kept for the thread's life. */
const toMarkdown = (html: string): string => {
  if (!turndown) {
    turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
    turndown.remove(['script', 'style', 'noscript', 'iframe']);
  }
  return turndown.turndown(html);
};

/** `fetch`: HTTP(S) GET; HTML becomes markdown; the body is capped in bytes, then in characters. */
export const fetchUrl = async (
  args: ToolArgs<'fetch'>,
  context: ToolContext,
  io: ToolIo,
): Promise<ToolResult> => {
  let url: URL;
  try {
    url = new URL(args.url);
  } catch {
    return fail('invalid-args', `${JSON.stringify(args.url)} is not a URL; give an http(s):// URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return fail(
      'invalid-args',
      `only http:// and https:// URLs can be fetched, got ${url.protocol}`,
    );
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'follow',
      signal: AbortSignal.any([io.signal, AbortSignal.timeout(TIMEOUT_MS)]),
      headers: {
        accept: 'text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5',
      },
    });
  } catch (error) {
    if (io.signal.aborted) return fail('canceled', `GET ${url.href} was canceled`);
    const cause = (error as { cause?: unknown }).cause;
    return fail('exec-failed', `GET ${url.href} failed: ${messageOf(cause ?? error)}`);
  }
  const type = response.headers.get('content-type') ?? '';
  const status = `${response.status} ${response.statusText}`.trim();
  if (type && !TEXT.test(type)) {
    await response.body?.cancel();
    return fail('invalid-args', `GET ${url.href}: ${status}, ${type} is not text; nothing to read`);
  }
  const max = Math.min(MAX_BYTES, context.limits.maxFileBytes);
  const { text, cut } = await readCapped(response, max);
  const body = type.includes('html') ? toMarkdown(text) : text;
  const note = cut ? `\n[… the body was longer than ${max} bytes and was cut]` : '';
  const { output, savedTo } = await capOutput(body + note, context, 'fetch');
  const header = `GET ${response.url || url.href}: ${status}${type ? `, ${type}` : ''}\n\n`;
  if (!response.ok) return fail('exec-failed', `GET ${url.href}: ${status}`, header + output);
  return done(header + output, {
    ...(savedTo ? { savedTo } : {}),
    data: { status: response.status, contentType: type, url: response.url || url.href },
  });
};
