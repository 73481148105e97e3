import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { classify, HttpStatusError } from '../../../src/workers/api/failure.ts';
import { streamOllama } from '../../../src/workers/api/providers/ollama.ts';
import type { LlmEvent, ModelSpec } from '../../../src/workers/protocol/api.ts';

const spec: ModelSpec = {
  name: 'local',
  provider: 'ollama',
  baseUrl: 'http://ollama.test:11434',
  model: 'm',
  toolProtocol: 'native',
  vision: false,
  reasoning: false,
  retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
  stallTimeoutMs: 1000,
};

const line = (content: string, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ message: { role: 'assistant', content }, done: false, ...extra })}\n`;
const DONE = line('', { done: true, done_reason: 'stop', prompt_eval_count: 3, eval_count: 2 });

interface Seen {
  url: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A real HTTP server on 127.0.0.1 answering once with these body chunks (strings, or bytes that
 * split characters), each written on its own; `run` talks to the last one started.
 */
let baseUrl = '';
const answer = async (
  chunks: (string | Uint8Array)[],
  init: { status?: number; statusText?: string; headers?: Record<string, string> } = {},
): Promise<Seen[]> => {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (data: Buffer) => (body += data.toString()));
    request.on('end', () => {
      seen.push({
        url: request.url ?? '',
        method: request.method ?? '',
        headers: request.headers,
        body,
      });
      response.writeHead(init.status ?? 200, init.statusText ?? '', init.headers ?? {});
      response.flushHeaders();
      const next = (i: number): void => {
        if (i === chunks.length) response.end();
        else response.write(chunks[i], () => setImmediate(() => next(i + 1)));
      };
      next(0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return seen;
};

const run = async (overrides: Partial<ModelSpec> = {}) => {
  const events: LlmEvent[] = [];
  try {
    for await (const event of streamOllama({
      spec: { ...spec, baseUrl, ...overrides },
      messages: [{ role: 'user', content: 'hi' }],
      tools: [],
      signal: new AbortController().signal,
      log: () => {},
      newId: () => 'call_1',
    }))
      events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
};

const textOf = (events: LlmEvent[]) =>
  events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');

describe('streamOllama', () => {
  it('posts once to /api/chat with the JSON headers, the key and the configured headers', async () => {
    const seen = await answer([DONE]);
    await run({
      apiKey: 'sk-1',
      headers: { authorization: 'Bearer other', 'content-type': 'text/plain', 'x-team': 'n' },
    });
    expect(seen).toHaveLength(1);
    const [request] = seen;
    expect(request!.url).toBe('/api/chat');
    expect(request!.method).toBe('POST');
    expect(request!.headers['authorization']).toBe('Bearer other');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['accept']).toBe('application/json');
    expect(request!.headers['x-team']).toBe('n');
    expect(JSON.parse(request!.body)).toMatchObject({ model: 'm', stream: true });
  });

  it('tells Ollama the context window as num_ctx, so it does not cut the prompt at its default', async () => {
    const seen = await answer([DONE]);
    await run({ contextWindow: 32_768, maxTokens: 1000 });
    expect(JSON.parse(seen[0]!.body).options).toEqual({ num_ctx: 32_768, num_predict: 1000 });
  });

  it('reads lines split across chunks, characters split across bytes, and skips blank lines', async () => {
    const bytes = new TextEncoder().encode(line('héllo'));
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
    await answer([
      bytes.slice(0, cut),
      bytes.slice(cut),
      '\n  \n',
      line('!').slice(0, 9),
      line('!').slice(9),
      DONE,
    ]);
    const { events, error } = await run();
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('héllo!');
    expect(events.at(-2)).toEqual({ type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } });
    expect(events.at(-1)).toMatchObject({ type: 'done', stopReason: 'end' });
  });

  it('reads a last line that has no newline', async () => {
    await answer([line('a'), DONE.trimEnd()]);
    const { events, error } = await run();
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'done' });
  });

  it('fails on a malformed line, after what came before it', async () => {
    await answer([line('a'), '{"message": {"content": "x"\n', line('never'), DONE]);
    const { events, error } = await run();
    expect(textOf(events)).toBe('a');
    expect((error as Error).message).toBe(
      'malformed chunk from the server: {"message": {"content": "x"',
    );
    expect(classify(error, spec)).toMatchObject({ code: 'llm-stream' });
    expect(classify(error, spec).message).toMatch(/malformed/);
  });

  it('fails on a JSON line that is not an object', async () => {
    await answer([line('a'), '42\n', DONE]);
    const { error } = await run();
    expect((error as Error).message).toBe('malformed chunk from the server: 42');
  });

  it('throws the message of an error line', async () => {
    await answer([line('a'), '{"error":"model crashed"}\n', DONE]);
    const { events, error } = await run();
    expect(textOf(events)).toBe('a');
    expect((error as Error).message).toBe('model crashed');
  });

  it('fails when the stream ends before done', async () => {
    await answer([line('a')]);
    const { error } = await run();
    expect((error as Error).message).toBe('Did not receive done or success response in stream.');
  });

  it('throws an HttpStatusError with the JSON error, the status and the headers', async () => {
    await answer(['{"error":"slow down"}'], {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '7' },
    });
    const { error } = await run();
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 429, message: 'slow down' });
    expect(classify(error, spec).options).toMatchObject({ retryable: true, retryAfterMs: 7000 });
  });

  it('takes the text of a non-JSON error body, or the status line when it is empty', async () => {
    await answer(['upstream exploded'], { status: 502 });
    expect((await run()).error).toMatchObject({ status: 502, message: 'upstream exploded' });
    await answer([], { status: 503, statusText: 'Service Unavailable' });
    expect((await run()).error).toMatchObject({
      status: 503,
      message: 'Error 503: Service Unavailable',
    });
  });
});
