import { afterEach, describe, expect, it, vi } from 'vitest';
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

/** A fetch answering once with these body chunks (strings, or bytes to split characters). */
const answer = (chunks: (string | Uint8Array)[], init: ResponseInit = {}) => {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === 'string' ? encoder.encode(c) : c);
      controller.close();
    },
  });
  const fetch = vi.fn(async (_url: string, _init: RequestInit) => new Response(body, init));
  vi.stubGlobal('fetch', fetch);
  return fetch;
};

const run = async (overrides: Partial<ModelSpec> = {}) => {
  const events: LlmEvent[] = [];
  try {
    for await (const event of streamOllama({
      spec: { ...spec, ...overrides },
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

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('streamOllama', () => {
  it('posts once to /api/chat with the JSON headers, the key and the configured headers', async () => {
    const fetch = answer([DONE]);
    await run({
      apiKey: 'sk-1',
      headers: { authorization: 'Bearer other', 'content-type': 'text/plain', 'x-team': 'n' },
    });
    expect(fetch).toHaveBeenCalledOnce();
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe('http://ollama.test:11434/api/chat');
    expect(init.method).toBe('POST');
    const headers = new Headers(init.headers);
    expect(headers.get('authorization')).toBe('Bearer other');
    expect(headers.get('content-type')).toBe('application/json');
    expect(headers.get('accept')).toBe('application/json');
    expect(headers.get('x-team')).toBe('n');
    expect(JSON.parse(init.body as string)).toMatchObject({ model: 'm', stream: true });
  });

  it('reads lines split across chunks, characters split across bytes, and skips blank lines', async () => {
    const bytes = new TextEncoder().encode(line('héllo'));
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
    answer([
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
    answer([line('a'), DONE.trimEnd()]);
    const { events, error } = await run();
    expect(error).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'done' });
  });

  it('fails on a malformed line, after what came before it', async () => {
    answer([line('a'), '{"message": {"content": "x"\n', line('never'), DONE]);
    const { events, error } = await run();
    expect(textOf(events)).toBe('a');
    expect((error as Error).message).toBe(
      'malformed chunk from the server: {"message": {"content": "x"',
    );
    expect(classify(error, spec)).toMatchObject({ code: 'llm-stream' });
    expect(classify(error, spec).message).toMatch(/malformed/);
  });

  it('fails on a JSON line that is not an object', async () => {
    answer([line('a'), '42\n', DONE]);
    const { error } = await run();
    expect((error as Error).message).toBe('malformed chunk from the server: 42');
  });

  it('throws the message of an error line', async () => {
    answer([line('a'), '{"error":"model crashed"}\n', DONE]);
    const { events, error } = await run();
    expect(textOf(events)).toBe('a');
    expect((error as Error).message).toBe('model crashed');
  });

  it('fails when the stream ends before done', async () => {
    answer([line('a')]);
    const { error } = await run();
    expect((error as Error).message).toBe('Did not receive done or success response in stream.');
  });

  it('throws an HttpStatusError with the JSON error, the status and the headers', async () => {
    answer(['{"error":"slow down"}'], {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '7' },
    });
    const { error } = await run();
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 429, message: 'slow down' });
    expect(classify(error, spec).options).toMatchObject({ retryable: true, retryAfterMs: 7000 });
  });

  it('takes the text of a non-JSON error body, or the status line when it is empty', async () => {
    answer(['upstream exploded'], { status: 502 });
    expect((await run()).error).toMatchObject({ status: 502, message: 'upstream exploded' });
    answer([], { status: 503, statusText: 'Service Unavailable' });
    expect((await run()).error).toMatchObject({
      status: 503,
      message: 'Error 503: Service Unavailable',
    });
  });
});
