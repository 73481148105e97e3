import type { ChatMessage, ImagePart, LlmEvent, ToolSpec, UserPart } from '../protocol/api.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { formatToolCall, formatToolResult, textProtocolAppendix } from './text-protocol.ts';
import { isObject } from '../shared/is-object.ts';

/** The text a model reads for a tool result. */
/** The images of a tool result. */
export const resultImages = (result: ToolResult): ImagePart[] =>
  (result.content ?? []).flatMap((c) =>
    c.type === 'image' ? [{ type: 'image' as const, data: c.data, mimeType: c.mimeType }] : [],
  );

/** What a model that cannot see images reads in place of one. */
export const imageNote = (image: ImagePart): string =>
  `[image omitted (${image.mimeType}, ${Math.round((image.data.length * 3) / 4 / 1024)} KB): this model cannot view images]`;

/** A user message's parts with images turned into notes for a model without vision. */
export const visibleParts = (content: string | UserPart[], vision: boolean): UserPart[] =>
  typeof content === 'string'
    ? [{ type: 'text', text: content }]
    : content.map((part) =>
        part.type === 'image' && !vision ? { type: 'text', text: imageNote(part) } : part,
      );

/** Joins text parts (for formats that take a plain string). */
export const partsText = (parts: UserPart[]): string =>
  parts.map((p) => (p.type === 'text' ? p.text : imageNote(p))).join('\n');

/** The system prompt: every `system` message, in order. */
export const systemText = (messages: ChatMessage[]): string =>
  messages.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n\n');

/** A `tool-call` event from raw argument JSON, or `tool-call-invalid` the model can read. */
export const toolCallEvent = (id: string, name: string, raw: string): LlmEvent => {
  if (!raw.trim()) return { type: 'tool-call', call: { id, name, args: {} } };
  let args: unknown;
  try {
    args = JSON.parse(raw);
  } catch (error) {
    return {
      type: 'tool-call-invalid',
      id,
      name,
      raw,
      message: `the arguments of ${name} are not valid JSON (${(error as Error).message}); send one JSON object`,
    };
  }
  const problem = argumentsProblem(name, args);
  return problem === undefined && isObject(args)
    ? { type: 'tool-call', call: { id, name, args } }
    : { type: 'tool-call-invalid', id, name, raw, message: problem ?? 'invalid arguments' };
};

/**
 * What is wrong with a call's parsed arguments, or undefined: the check every call gets in this
 * worker, native or recovered from text (the tool's own schema is checked by the host, for both).
 */
export const argumentsProblem = (name: string, args: unknown): string | undefined =>
  isObject(args) ? undefined : `the arguments of ${name} must be a JSON object`;

const resultValue = (result: ToolResult): unknown =>
  result.ok
    ? result.output
    : {
        error: result.error.message,
        code: result.error.code,
        ...(result.output ? { output: result.output } : {}),
      };

/**
 * Rewrites a conversation for the text protocol: the tool appendix joins the system prompt,
 * assistant calls become `TOOL_CALL:` lines and tool results `TOOL_RESULT:` user messages.
 */
export const applyTextProtocol = (messages: ChatMessage[], tools: ToolSpec[]): ChatMessage[] => {
  const out: ChatMessage[] = [];
  const resultMessages = new Set<ChatMessage>();
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        out.push(message);
        break;
      case 'assistant': {
        const lines = (message.toolCalls ?? []).map(formatToolCall);
        out.push({
          role: 'assistant',
          content: [message.content, ...lines].filter(Boolean).join('\n'),
        });
        break;
      }
      case 'tool': {
        const parts: UserPart[] = [
          { type: 'text', text: formatToolResult(message.name, resultValue(message.result)) },
          ...resultImages(message.result),
        ];
        const last = out.at(-1);
        if (last?.role === 'user' && resultMessages.has(last) && Array.isArray(last.content))
          last.content.push(...parts);
        else {
          const user: ChatMessage = { role: 'user', content: parts };
          resultMessages.add(user);
          out.push(user);
        }
        break;
      }
    }
  }
  if (tools.length === 0) return out;
  const appendix = textProtocolAppendix(tools);
  const first = out[0];
  if (first?.role === 'system')
    out[0] = { role: 'system', content: `${first.content}\n\n${appendix}` };
  else out.unshift({ role: 'system', content: appendix });
  return out;
};
