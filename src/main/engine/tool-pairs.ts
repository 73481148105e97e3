import type { ChatMessage, ToolCall } from '../../workers/protocol/api.ts';
import { fail } from '../../workers/protocol/tool-result.ts';

type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/** The result given to a call whose session ended (a killed daemon) before it finished. */
export const NOT_RUN = 'not run: the session ended before this call finished';

/** An assistant message's calls, and the results found for them so far. */
interface Calls {
  calls: ToolCall[];
  results: Map<string, ToolMessage>;
}

/**
 * The history as the providers accept it: every tool call of an assistant message followed at once
 * by its result (OpenAI and Anthropic answer HTTP 400 otherwise). A result answers the latest
 * unanswered call with its id, wherever it was written; a call with no result gets one saying it
 * was not run (`added`, for the caller to save); a result with no call is left out (`dropped`).
 */
export const pairToolResults = (
  messages: readonly ChatMessage[],
): { messages: ChatMessage[]; added: ToolMessage[]; dropped: number } => {
  const entries: (ChatMessage | Calls)[] = [];
  const open = new Map<string, Calls>();
  let dropped = 0;
  for (const message of messages) {
    if (message.role === 'tool') {
      const calls = open.get(message.toolCallId);
      if (calls && !calls.results.has(message.toolCallId))
        calls.results.set(message.toolCallId, message);
      else dropped++;
      continue;
    }
    entries.push(message);
    if (message.role !== 'assistant' || !message.toolCalls?.length) continue;
    const calls: Calls = { calls: message.toolCalls, results: new Map() };
    entries.push(calls);
    for (const call of message.toolCalls) open.set(call.id, calls);
  }
  const added: ToolMessage[] = [];
  const paired = entries.flatMap((entry) =>
    'calls' in entry
      ? entry.calls.map((call) => {
          const result = entry.results.get(call.id);
          if (result) return result;
          const missing: ToolMessage = {
            role: 'tool',
            toolCallId: call.id,
            name: call.name,
            result: fail('canceled', NOT_RUN),
          };
          added.push(missing);
          return missing;
        })
      : [entry],
  );
  return { messages: paired, added, dropped };
};

/** The ids of every tool call in `messages`. */
export const callIds = (messages: readonly ChatMessage[]): Set<string> =>
  new Set(
    messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])),
  );
