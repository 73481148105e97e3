import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  ImageBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { ChatMessage, LlmEvent, StopReason, UserPart } from '../../protocol/api.ts';
import { imageNote, resultImages, systemText, toolCallEvent, visibleParts } from '../messages.ts';
import { resultText } from '../../protocol/tool-result.ts';
import { sdkClientOptions, type ProviderCall, type ProviderStream } from './provider.ts';

type MediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
const MEDIA_TYPES = new Set<string>(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

const block = (part: UserPart): TextBlockParam | ImageBlockParam =>
  part.type === 'text' || !MEDIA_TYPES.has(part.mimeType)
    ? { type: 'text', text: part.type === 'text' ? part.text : imageNote(part) }
    : {
        type: 'image',
        source: { type: 'base64', media_type: part.mimeType as MediaType, data: part.data },
      };

/**
 * Messages API turns: system messages become `system`, tool results become `tool_result`
 * blocks (images inside them for vision models), consecutive results share one user turn.
 */
const toAnthropicMessages = (messages: ChatMessage[], vision: boolean): MessageParam[] => {
  const out: MessageParam[] = [];
  let resultTurn: { role: 'user'; content: ContentBlockParam[] } | undefined;
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        break;
      case 'user':
        out.push({
          role: 'user',
          content:
            typeof m.content === 'string' ? m.content : visibleParts(m.content, vision).map(block),
        });
        break;
      case 'assistant': {
        const content: ContentBlockParam[] = [];
        if (m.reasoning && m.reasoningSignature)
          content.push({
            type: 'thinking',
            thinking: m.reasoning,
            signature: m.reasoningSignature,
          });
        if (m.content) content.push({ type: 'text', text: m.content });
        for (const call of m.toolCalls ?? [])
          content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.args });
        out.push({ role: 'assistant', content: content.length > 0 ? content : '(no content)' });
        break;
      }
      case 'tool': {
        const images = resultImages(m.result);
        const result: ToolResultBlockParam = {
          type: 'tool_result',
          tool_use_id: m.toolCallId,
          content: [
            { type: 'text', text: resultText(m.result) },
            ...visibleParts(images, vision).map(block),
          ],
          ...(m.result.ok ? {} : { is_error: true }),
        };
        if (resultTurn && out.at(-1) === resultTurn) resultTurn.content.push(result);
        else {
          resultTurn = { role: 'user', content: [result] };
          out.push(resultTurn);
        }
        break;
      }
    }
  }
  return out;
};

const stopReason = (reason: string | null, toolCalls: number): StopReason => {
  if (toolCalls > 0 || reason === 'tool_use') return 'tool-calls';
  if (reason === 'max_tokens' || reason === 'model_context_window_exceeded') return 'max-tokens';
  if (reason === 'refusal') return 'content-filter';
  return reason === 'end_turn' || reason === 'stop_sequence' || reason === null ? 'end' : 'other';
};

const DEFAULT_MAX_TOKENS = 8192;

/** The request body for a call: model, limits, system text, messages, tools, thinking. */
const requestParams = (call: ProviderCall): MessageCreateParamsStreaming => {
  const { spec } = call;
  const maxTokens = spec.maxTokens ?? DEFAULT_MAX_TOKENS;
  const system = systemText(call.messages);
  return {
    model: spec.model,
    max_tokens: maxTokens,
    messages: toAnthropicMessages(call.messages, spec.vision),
    stream: true,
    ...(system ? { system } : {}),
    ...(call.tools.length > 0
      ? {
          tools: call.tools.map((t) => ({
            name: t.name,
            description: t.description,
            input_schema: t.inputSchema as { type: 'object' },
          })),
        }
      : {}),
    ...(spec.reasoning
      ? { thinking: { type: 'enabled', budget_tokens: Math.max(1024, Math.floor(maxTokens / 2)) } }
      : spec.temperature === undefined
        ? {}
        : { temperature: spec.temperature }),
  };
};

type StreamEvent = RawMessageStreamEvent;

/** What one stream has told so far: tool calls being written, the stop reason, usage. */
class StreamState {
  readonly tools = new Map<number, { id: string; name: string; json: string }>();
  calls = 0;
  reason: string | null = null;
  usage = { inputTokens: 0, outputTokens: 0, cacheRead: 0, cacheWrite: 0 };

  constructor(private readonly newId: () => string) {}

  /** The normalized events one of the SDK's stream events makes. */
  *events(event: StreamEvent): Generator<LlmEvent> {
    switch (event.type) {
      case 'message_start':
        this.usage.inputTokens = event.message.usage.input_tokens;
        this.usage.cacheRead = event.message.usage.cache_read_input_tokens ?? 0;
        this.usage.cacheWrite = event.message.usage.cache_creation_input_tokens ?? 0;
        break;
      case 'content_block_start':
        if (event.content_block.type === 'tool_use')
          this.tools.set(event.index, {
            id: event.content_block.id,
            name: event.content_block.name,
            json: '',
          });
        break;
      case 'content_block_delta':
        yield* this.#delta(event.index, event.delta);
        break;
      case 'content_block_stop': {
        const tool = this.tools.get(event.index);
        if (tool) {
          this.calls++;
          yield toolCallEvent(tool.id || this.newId(), tool.name, tool.json);
        }
        break;
      }
      case 'message_delta':
        this.reason = event.delta.stop_reason;
        this.usage.outputTokens = event.usage.output_tokens;
        if (event.usage.input_tokens) this.usage.inputTokens = event.usage.input_tokens;
        break;
      case 'message_stop':
        break;
    }
  }

  *#delta(
    index: number,
    delta: Extract<StreamEvent, { type: 'content_block_delta' }>['delta'],
  ): Generator<LlmEvent> {
    if (delta.type === 'text_delta') yield { type: 'text', text: delta.text };
    else if (delta.type === 'thinking_delta') yield { type: 'reasoning', text: delta.thinking };
    else if (delta.type === 'signature_delta')
      yield { type: 'reasoning', text: '', signature: delta.signature };
    else if (delta.type === 'input_json_delta') {
      const tool = this.tools.get(index);
      if (tool) tool.json += delta.partial_json;
    }
  }

  /** The usage and `done` events that end the stream. */
  *end(): Generator<LlmEvent> {
    const { inputTokens, outputTokens, cacheRead, cacheWrite } = this.usage;
    yield {
      type: 'usage',
      usage: {
        inputTokens,
        outputTokens,
        ...(cacheRead ? { cacheReadTokens: cacheRead } : {}),
        ...(cacheWrite ? { cacheWriteTokens: cacheWrite } : {}),
      },
    };
    yield { type: 'done', stopReason: stopReason(this.reason, this.calls), toolProtocol: 'native' };
  }
}

/** Anthropic Messages through `@anthropic-ai/sdk` (its retries off: ours apply). */
export const streamAnthropic: ProviderStream = async function* (call) {
  const { spec } = call;
  const client = new Anthropic({
    apiKey: spec.apiKey ?? null,
    // Given, so the client does not take ANTHROPIC_AUTH_TOKEN from the environment and send it,
    // as a bearer token, to whatever endpoint baseUrl names.
    authToken: null,
    ...sdkClientOptions(call),
  });
  const stream = await client.messages.create(requestParams(call), { signal: call.signal });
  const state = new StreamState(call.newId);
  for await (const event of stream) yield* state.events(event);
  call.signal.throwIfAborted(); // the SDK ends the stream quietly on abort
  yield* state.end();
};
