import { describe, expect, it } from 'vitest';
import { HttpStatusError } from '../../../src/workers/api/failure.ts';
import { sseData, throwUnlessOk } from '../../../src/workers/api/providers/http.ts';

/** A body that arrives in the given pieces, as a network delivers it. */
const body = (...pieces: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(new TextEncoder().encode(piece));
      controller.close();
    },
  });

const all = async (stream: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const item of stream) out.push(item);
  return out;
};

describe('the streams read with fetch', () => {
  it('server-sent events: data split across pieces and lines, CRLF, comments, up to [DONE]', async () => {
    const events = await all(
      sseData(
        body(
          ': keep-alive\n\n',
          'data: {"a":',
          '1}\n\n',
          'event: message\r\ndata: {"b":2}\r\n\r\n',
          'data: first\ndata: second\n\n',
          'data:{"c":3}\n\n',
          'data: [DONE]\n\n',
          'data: {"after":"done"}\n\n',
        ),
      ),
    );
    expect(events).toEqual(['{"a":1}', '{"b":2}', 'first\nsecond', '{"c":3}']);
  });

  it('an event the server did not end with a blank line still counts', async () => {
    expect(await all(sseData(body('data: {"x":1}')))).toEqual(['{"x":1}']);
  });

  it.each([
    [
      'OpenAI',
      '{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}',
      'Incorrect API key',
    ],
    ['Ollama', '{"error":"model not found"}', 'model not found'],
    ['plain text', 'upstream timed out', 'upstream timed out'],
  ])(
    'an error response (%s) throws its status, message and headers',
    async (_kind, text, message) => {
      const response = new Response(text, { status: 429, headers: { 'retry-after': '2' } });
      const error = await throwUnlessOk(response).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HttpStatusError);
      expect(error).toMatchObject({ status: 429, message });
      expect((error as HttpStatusError).headers?.get('retry-after')).toBe('2');
    },
  );
});
