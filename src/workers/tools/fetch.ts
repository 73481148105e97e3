import { lookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import TurndownService from 'turndown';
import { Agent, fetch, type Response } from 'undici';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { capOutput } from './output.ts';
import { privateReason } from './private-address.ts';
import type { ToolIo } from './io.ts';
import { done, fail, messageOf } from './result.ts';

const TIMEOUT_MS = 30_000;
const MAX_BYTES = 5 * 1024 * 1024;
const MAX_REDIRECTS = 10;
const ACCEPT = 'text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5';
const TEXT = /^(text\/|application\/(json|xml|javascript|[a-z.+-]*\+(json|xml))|image\/svg\+xml)/;

/** Reads at most `max` bytes of a body; `cut` tells whether more followed. */
const readCapped = async (response: Response, max: number) => {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  if (response.body) {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
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

/** A connection refused before it was made: the host is a loopback or private address. */
class PrivateAddress extends Error {
  override name = 'PrivateAddress';
  constructor(
    readonly host: string,
    readonly kind: string,
    readonly address: string,
  ) {
    super(`${host} is ${address}, a ${kind} address`);
  }
}

/**
 * An undici agent whose DNS answers are checked when it connects, so a name that resolves (or
 * re-resolves) to a private address is refused at the socket, whatever was resolved before.
 */
const guardedAgent = (allowed: readonly string[]): Agent =>
  new Agent({
    connect: {
      lookup: (host, options, callback) =>
        lookup(host, { ...options, all: true }, (error, found: LookupAddress[]) => {
          if (error) return callback(error, '', 0);
          for (const { address } of found) {
            const reason = privateReason(host, address, allowed);
            if (reason)
              return callback(new PrivateAddress(host, reason.kind, reason.address), '', 0);
          }
          const first = found[0];
          if ((options as { all?: boolean }).all)
            return (callback as (e: null, a: LookupAddress[]) => void)(null, found);
          return callback(null, first?.address ?? '', first?.family ?? 4);
        }),
    },
  });

const parseUrl = (text: string): URL | Extract<ToolResult, { ok: false }> => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('invalid-args', `${JSON.stringify(text)} is not a URL; give an http(s):// URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return fail(
      'invalid-args',
      `only http:// and https:// URLs can be fetched, got ${url.protocol}`,
    );
  return url;
};

/** GETs `start`, following redirects by hand so every hop's address is checked. */
const follow = async (
  start: URL,
  agent: Agent,
  allowed: readonly string[],
  signal: AbortSignal,
) => {
  let url = start;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    // An address in the URL is never looked up: it is checked here.
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const literal = isIP(host) ? privateReason(host, host, allowed) : null;
    if (literal) throw new PrivateAddress(host, literal.kind, literal.address);
    const response = await fetch(url, {
      redirect: 'manual',
      signal,
      dispatcher: agent,
      headers: { accept: ACCEPT },
    });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || !location) return { response, url };
    await response.body?.cancel();
    const next = parseUrl(new URL(location, url).href);
    if ('ok' in next) throw new Error(`a redirect led to ${location}: ${next.error.message}`);
    url = next;
  }
  throw new Error(`more than ${MAX_REDIRECTS} redirects`);
};

/** What the model and the user read when a private address needs asking. */
const askFor = (url: URL, error: PrivateAddress): ToolResult => ({
  ok: false,
  error: {
    code: 'needs-approval',
    message:
      `GET ${url.href} was stopped before connecting: ${error.message}, which may be a service ` +
      `of this machine or its network. It needs the user's approval, or ` +
      `tools.fetch.allowPrivate: [${error.host}] in the config.`,
  },
  ask: {
    reason: `it reaches ${error.host} (${error.address}), a ${error.kind} address`,
    grant: error.host,
  },
});

/** The first `PrivateAddress` along an error's `cause` chain. */
const privateCause = (error: unknown): PrivateAddress | undefined => {
  for (let e = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof PrivateAddress) return e;
  return undefined;
};

/**
 * `fetch`: HTTP(S) GET; HTML becomes markdown; the body is capped in bytes, then in characters.
 * Loopback, link-local and private addresses — in the URL, in DNS answers, after redirects — are
 * not connected to unless `tools.fetch.allowPrivate` or the user (`needs-approval`) allows them.
 */
export const fetchUrl = async (
  args: ToolArgs<'fetch'>,
  context: ToolContext,
  io: ToolIo,
): Promise<ToolResult> => {
  const url = parseUrl(args.url);
  if ('ok' in url) return url;
  const allowed = [...context.fetch.allowPrivate, ...(context.fetch.granted ?? [])];
  const agent = guardedAgent(allowed);
  try {
    return await fetchWith(url, agent, allowed, context, io);
  } finally {
    void agent.destroy();
  }
};

const fetchWith = async (
  url: URL,
  agent: Agent,
  allowed: readonly string[],
  context: ToolContext,
  io: ToolIo,
): Promise<ToolResult> => {
  let response: Response;
  let final: URL;
  try {
    const signal = AbortSignal.any([io.signal, AbortSignal.timeout(TIMEOUT_MS)]);
    ({ response, url: final } = await follow(url, agent, allowed, signal));
  } catch (error) {
    const blocked = privateCause(error);
    if (blocked) return askFor(url, blocked);
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
  const header = `GET ${final.href}: ${status}${type ? `, ${type}` : ''}\n\n`;
  if (!response.ok) return fail('exec-failed', `GET ${url.href}: ${status}`, header + output);
  return done(header + output, {
    ...(savedTo ? { savedTo } : {}),
    data: { status: response.status, contentType: type, url: final.href },
  });
};
