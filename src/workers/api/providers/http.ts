import { HttpStatusError } from '../failure.ts';

// What the providers we drive with fetch share (Ollama's NDJSON, OpenAI-compatible SSE): the body
// as lines, and an error response as a `HttpStatusError` the classifier reads.

/** The body's lines, each decoded once; the last one counts without its newline. */
export const lines = async function* (body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true });
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    yield* parts;
  }
  pending += decoder.decode();
  if (pending) yield pending;
};

/**
 * The message of an error body: its `error` (Ollama: a string; OpenAI and the servers that speak
 * its API: an object with `message`) or `message`, else the body's text.
 */
const messageOf = (body: unknown): string | undefined => {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message } = body as { error?: unknown; message?: unknown };
  if (typeof error === 'string' && error) return error;
  if (typeof error === 'object' && error !== null) {
    const inner = (error as { message?: unknown }).message;
    if (typeof inner === 'string' && inner) return inner;
  }
  return typeof message === 'string' && message ? message : undefined;
};

/** The message of an error response: the JSON body's error message, else the body's text. */
export const errorMessage = async (response: Response): Promise<string> => {
  const fallback = `Error ${response.status}: ${response.statusText}`;
  try {
    const text = await response.text();
    try {
      return messageOf(JSON.parse(text)) ?? (text || fallback);
    } catch {
      return text || fallback;
    }
  } catch {
    return fallback;
  }
};

/** Throws the response's status and message when it is not a success. */
export const throwUnlessOk = async (response: Response): Promise<void> => {
  if (!response.ok)
    throw new HttpStatusError(response.status, await errorMessage(response), response.headers);
};

/**
 * The `data` of each server-sent event of `body` (joined when an event has several lines), up to
 * an OpenAI-style `[DONE]`; comments and other fields are skipped.
 */
export const sseData = async function* (body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let data: string[] = [];
  for await (const raw of lines(body)) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '') {
      if (data.length === 0) continue;
      const event = data.join('\n');
      data = [];
      if (event === '[DONE]') return;
      yield event;
      continue;
    }
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
  }
  if (data.length > 0 && data.join('\n') !== '[DONE]') yield data.join('\n');
};
