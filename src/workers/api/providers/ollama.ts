import { Ollama, type Message, type Tool } from 'ollama';
import type { ChatMessage } from '../../protocol/api.ts';
import { HttpStatusError } from '../failure.ts';
import { partsText, resultImages, resultText, toolCallEvent, visibleParts } from '../messages.ts';
import type { ProviderStream } from './provider.ts';

/** Native `/api/chat` messages: images ride in `images`, tool results name their tool. */
export const toOllamaMessages = (messages: ChatMessage[], vision: boolean): Message[] =>
  messages.map((m): Message => {
    switch (m.role) {
      case 'system':
        return { role: 'system', content: m.content };
      case 'user': {
        const parts = visibleParts(m.content, vision);
        const images = parts.flatMap((p) => (p.type === 'image' ? [p.data] : []));
        const text = partsText(parts.filter((p) => p.type === 'text'));
        return { role: 'user', content: text, ...(images.length > 0 ? { images } : {}) };
      }
      case 'assistant':
        return {
          role: 'assistant',
          content: m.content,
          ...(m.reasoning ? { thinking: m.reasoning } : {}),
          ...(m.toolCalls?.length
            ? {
                tool_calls: m.toolCalls.map((c) => ({
                  function: { name: c.name, arguments: c.args },
                })),
              }
            : {}),
        };
      case 'tool': {
        const parts = visibleParts(resultImages(m.result), vision);
        const images = parts.flatMap((p) => (p.type === 'image' ? [p.data] : []));
        const notes = parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
        return {
          role: 'tool',
          content: [resultText(m.result), ...notes].join('\n'),
          tool_name: m.name,
          ...(images.length > 0 ? { images } : {}),
        };
      }
    }
  });

/**
 * A fetch for the ollama client that carries our signal (the client has no per-request signal),
 * keeps the headers its errors drop, and fails on a malformed NDJSON line instead of skipping it.
 */
const ollamaFetch =
  (signal: AbortSignal, seen: { headers?: Headers }): typeof fetch =>
  async (input, init) => {
    const response = await fetch(input, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal,
    });
    seen.headers = response.headers;
    if (!response.ok || !response.body) return response;
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let pending = '';
    // The client skips a line it cannot parse; an `error` line in its place makes it throw, in order.
    const checked = (line: string): string => {
      try {
        if (line.trim()) JSON.parse(line);
        return line;
      } catch {
        return JSON.stringify({ error: `malformed chunk from the server: ${line.slice(0, 200)}` });
      }
    };
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          pending += decoder.decode(chunk, { stream: true });
          const lines = pending.split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) controller.enqueue(encoder.encode(`${checked(line)}\n`));
        },
        flush(controller) {
          pending += decoder.decode();
          if (pending) controller.enqueue(encoder.encode(checked(pending)));
        },
      }),
    );
    return new Response(body, { status: response.status, headers: response.headers });
  };

/** Ollama's native chat API through the `ollama` client. */
export const streamOllama: ProviderStream = async function* (call) {
  const { spec } = call;
  const seen: { headers?: Headers } = {};
  const client = new Ollama({
    host: spec.baseUrl,
    fetch: ollamaFetch(call.signal, seen),
    headers: {
      ...(spec.apiKey ? { Authorization: `Bearer ${spec.apiKey}` } : {}),
      ...spec.headers,
    },
  });
  let stream;
  try {
    stream = await client.chat({
      model: spec.model,
      messages: toOllamaMessages(call.messages, spec.vision),
      stream: true,
      ...(call.tools.length > 0
        ? {
            tools: call.tools.map((t): Tool => ({
              type: 'function',
              function: { name: t.name, description: t.description, parameters: t.inputSchema },
            })),
          }
        : {}),
      ...(spec.reasoning ? { think: true } : {}),
      options: {
        ...(spec.temperature === undefined ? {} : { temperature: spec.temperature }),
        ...(spec.maxTokens === undefined ? {} : { num_predict: spec.maxTokens }),
      },
    });
  } catch (error) {
    const status = (error as { status_code?: unknown }).status_code;
    if (typeof status === 'number')
      throw new HttpStatusError(status, (error as Error).message, seen.headers);
    throw error;
  }
  let calls = 0;
  for await (const part of stream) {
    const { message } = part;
    if (message.thinking) yield { type: 'reasoning', text: message.thinking };
    if (message.content) yield { type: 'text', text: message.content };
    for (const tool of message.tool_calls ?? []) {
      calls++;
      const id = (tool as { id?: unknown }).id;
      const args: unknown = tool.function.arguments;
      yield toolCallEvent(
        typeof id === 'string' && id ? id : call.newId(),
        tool.function.name,
        typeof args === 'string' ? args : JSON.stringify(args ?? {}),
      );
    }
    if (part.done) {
      yield {
        type: 'usage',
        usage: { inputTokens: part.prompt_eval_count ?? 0, outputTokens: part.eval_count ?? 0 },
      };
      yield {
        type: 'done',
        stopReason: calls > 0 ? 'tool-calls' : part.done_reason === 'length' ? 'max-tokens' : 'end',
        toolProtocol: 'native',
      };
      return;
    }
  }
  call.signal.throwIfAborted(); // the SDK ends the stream quietly on abort
};
