import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ChatMessage, LlmEvent, StopReason } from '../../protocol/api.ts';
import { imageNote, partsText, resultImages, toolCallEvent, visibleParts } from '../messages.ts';
import { resultText } from '../../protocol/tool-result.ts';
import { sseData, throwUnlessOk } from './http.ts';
import type { ProviderCall, ProviderStream } from './provider.ts';

const contentParts = (parts: ReturnType<typeof visibleParts>): ChatCompletionContentPart[] =>
  parts.map((p) =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : { type: 'image_url', image_url: { url: `data:${p.mimeType};base64,${p.data}` } },
  );

/**
 * Chat-completions messages. Tool messages carry text only, so a vision model gets a tool's
 * images in a user message right after the results; other models get a note in the result.
 */
const toOpenAiMessages = (
  messages: ChatMessage[],
  vision: boolean,
): ChatCompletionMessageParam[] => {
  const out: ChatCompletionMessageParam[] = [];
  let pendingImages: ChatCompletionContentPart[] = [];
  const flushImages = () => {
    if (pendingImages.length > 0) out.push({ role: 'user', content: pendingImages });
    pendingImages = [];
  };
  for (const m of messages) {
    if (m.role !== 'tool') flushImages();
    switch (m.role) {
      case 'system':
        out.push({ role: 'system', content: m.content });
        break;
      case 'user': {
        const parts = visibleParts(m.content, vision);
        out.push({
          role: 'user',
          content: parts.some((p) => p.type === 'image') ? contentParts(parts) : partsText(parts),
        });
        break;
      }
      case 'assistant':
        out.push({
          role: 'assistant',
          content: m.content || null,
          ...(m.toolCalls?.length
            ? {
                tool_calls: m.toolCalls.map((c) => ({
                  id: c.id,
                  type: 'function' as const,
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                })),
              }
            : {}),
        });
        break;
      case 'tool': {
        const images = resultImages(m.result);
        const notes = vision ? [] : images.map(imageNote);
        out.push({
          role: 'tool',
          tool_call_id: m.toolCallId,
          content: [resultText(m.result), ...notes].join('\n'),
        });
        if (vision && images.length > 0)
          pendingImages.push(
            { type: 'text', text: `Images from the ${m.name} result (${m.toolCallId}):` },
            ...contentParts(images),
          );
        break;
      }
    }
  }
  flushImages();
  return out;
};

const stopReason = (finish: string | null, toolCalls: number): StopReason => {
  if (toolCalls > 0 || finish === 'tool_calls' || finish === 'function_call') return 'tool-calls';
  if (finish === 'length') return 'max-tokens';
  if (finish === 'content_filter') return 'content-filter';
  return finish === 'stop' || finish === null ? 'end' : 'other';
};

interface ToolDelta {
  id: string;
  name: string;
  args: string;
}

/** The request body: model, messages, tools, limits (`max_completion_tokens` on OpenAI itself). */
const requestBody = (call: ProviderCall): ChatCompletionCreateParamsStreaming => {
  const { spec } = call;
  const official = /^https:\/\/api\.openai\.com\//.test(spec.baseUrl);
  return {
    model: spec.model,
    messages: toOpenAiMessages(call.messages, spec.vision),
    stream: true,
    stream_options: { include_usage: true },
    ...(call.tools.length > 0
      ? {
          tools: call.tools.map((t) => ({
            type: 'function' as const,
            function: { name: t.name, description: t.description, parameters: t.inputSchema },
          })),
        }
      : {}),
    ...(spec.maxTokens === undefined
      ? {}
      : official
        ? { max_completion_tokens: spec.maxTokens }
        : { max_tokens: spec.maxTokens }),
    ...(spec.temperature === undefined ? {} : { temperature: spec.temperature }),
  };
};

const usageOf = (usage: CompletionUsage): LlmEvent => ({
  type: 'usage',
  usage: {
    inputTokens: usage.prompt_tokens,
    outputTokens: usage.completion_tokens,
    ...(usage.prompt_tokens_details?.cached_tokens
      ? { cacheReadTokens: usage.prompt_tokens_details.cached_tokens }
      : {}),
    ...(usage.completion_tokens_details?.reasoning_tokens
      ? { reasoningTokens: usage.completion_tokens_details.reasoning_tokens }
      : {}),
  },
});

/** One choice's delta: reasoning and text out at once, tool-call pieces gathered by index. */
function* deltaEvents(
  delta: ChatCompletionChunk['choices'][number]['delta'],
  tools: Map<number, ToolDelta>,
): Generator<LlmEvent> {
  // DeepSeek, vLLM and llama.cpp send `reasoning_content`; OpenRouter and Ollama send `reasoning`.
  const extra = delta as typeof delta & {
    reasoning_content?: string | null;
    reasoning?: string | null;
  };
  const reasoning = extra.reasoning_content ?? extra.reasoning;
  if (reasoning) yield { type: 'reasoning', text: reasoning };
  if (delta.content) yield { type: 'text', text: delta.content };
  for (const part of delta.tool_calls ?? []) {
    const entry = tools.get(part.index) ?? { id: '', name: '', args: '' };
    tools.set(part.index, entry);
    if (part.id) entry.id = part.id;
    if (part.function?.name && !entry.name) entry.name = part.function.name;
    if (part.function?.arguments) entry.args += part.function.arguments;
  }
}

/** The request's headers: the key, then `headers` from the config (which may replace it). */
const requestHeaders = (call: ProviderCall): Headers => {
  const headers = new Headers();
  headers.set('Authorization', `Bearer ${call.spec.apiKey ?? 'no-key'}`);
  for (const [name, value] of Object.entries(call.spec.headers ?? {})) headers.set(name, value);
  headers.set('Content-Type', 'application/json');
  headers.set('Accept', 'text/event-stream, application/json');
  return headers;
};

/** One server-sent event's chunk, or the error the server sent in the stream instead. */
const chunkOf = (data: string): ChatCompletionChunk => {
  const parsed = JSON.parse(data) as ChatCompletionChunk & { error?: { message?: unknown } };
  if (parsed.error !== undefined) {
    const message = parsed.error.message;
    throw new Error(typeof message === 'string' ? message : JSON.stringify(parsed.error));
  }
  return parsed;
};

/**
 * OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp, LM Studio, OpenRouter…): one POST
 * to `/chat/completions` with fetch, its server-sent events read as they come. No client library:
 * the request and the stream are all it takes, and a library's code (~6 MiB of an isolate's heap)
 * would sit in the API worker all day. Retries are ours (retry.ts); errors are classified from
 * the status, its body's message and its headers (failure.ts).
 */
export const streamOpenAi: ProviderStream = async function* (call) {
  const response = await fetch(`${call.spec.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
    method: 'POST',
    headers: requestHeaders(call),
    body: JSON.stringify(requestBody(call)),
    signal: call.signal,
  });
  await throwUnlessOk(response);
  if (!response.body) throw new Error('the server sent no body');
  const tools = new Map<number, ToolDelta>();
  let finish: string | null = null;
  for await (const data of sseData(response.body)) {
    const chunk = chunkOf(data);
    if (chunk.usage) yield usageOf(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.delta) yield* deltaEvents(choice.delta, tools);
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  call.signal.throwIfAborted();
  for (const [, entry] of [...tools].sort(([a], [b]) => a - b))
    yield toolCallEvent(entry.id || call.newId(), entry.name, entry.args);
  yield { type: 'done', stopReason: stopReason(finish, tools.size), toolProtocol: 'native' };
};
