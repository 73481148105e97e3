import type { ChatResponse, Message, Tool } from 'ollama';
import type { ChatMessage, ModelSpec } from '../../protocol/api.ts';
import { partsText, resultImages, toolCallEvent, visibleParts } from '../messages.ts';
import { resultText } from '../../protocol/tool-result.ts';
import { lines, throwUnlessOk } from './http.ts';
import type { ProviderStream } from './provider.ts';
import { isObject } from '../../shared/is-object.ts';

/** Native `/api/chat` messages: images ride in `images`, tool results name their tool. */
const toOllamaMessages = (messages: ChatMessage[], vision: boolean): Message[] =>
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

/** Our headers; the key and `headers` from the config, where those do not set the JSON ones. */
const requestHeaders = (spec: ModelSpec): Headers => {
  const headers = new Headers();
  if (spec.apiKey) headers.set('Authorization', `Bearer ${spec.apiKey}`);
  for (const [name, value] of Object.entries(spec.headers ?? {})) headers.set(name, value);
  headers.set('Content-Type', 'application/json');
  headers.set('Accept', 'application/json');
  // As the ollama client did: ollama.com takes the key from $OLLAMA_API_KEY when none is set.
  const envKey = process.env['OLLAMA_API_KEY'];
  const { protocol, hostname } = new URL(spec.baseUrl);
  if (protocol === 'https:' && hostname === 'ollama.com' && envKey && !headers.has('Authorization'))
    headers.set('Authorization', `Bearer ${envKey}`);
  return headers;
};

/** Ollama's native chat API: one POST to `/api/chat`, its NDJSON reply parsed line by line. */
/** The body of Ollama's /api/chat request for `call`. */
const requestBody = (call: Parameters<ProviderStream>[0]): string => {
  const { spec } = call;
  return JSON.stringify({
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
      // Without it Ollama cuts the prompt at its own default (2k–8k tokens), silently.
      ...(spec.contextWindow === undefined ? {} : { num_ctx: spec.contextWindow }),
    },
  });
};

/** One line of the stream as a chunk, or a clear error for one that is not. */
const chunkOf = (line: string): ChatResponse => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed)) throw new Error(`malformed chunk from the server: ${line.slice(0, 200)}`);
  const part = parsed as unknown as ChatResponse;
  if ('error' in part) throw new Error(String(part.error));
  return part;
};

export const streamOllama: ProviderStream = async function* (call) {
  const { spec } = call;
  const response = await fetch(`${spec.baseUrl}/api/chat`, {
    method: 'POST',
    headers: requestHeaders(spec),
    body: requestBody(call),
    signal: call.signal,
  });
  await throwUnlessOk(response);
  if (!response.body) throw new Error('Missing body');
  let calls = 0;
  for await (const line of lines(response.body)) {
    if (!line.trim()) continue;
    const part = chunkOf(line);
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
  call.signal.throwIfAborted();
  throw new Error('Did not receive done or success response in stream.');
};
