import type { ChatMessage } from '../../../workers/protocol/api.ts';
import { summarizeResult } from '../../render/turn.ts';
import { resultDetail } from './reducer.ts';
import type { NewEntry } from './types.ts';

const userText = (content: Extract<ChatMessage, { role: 'user' }>['content']): string =>
  typeof content === 'string'
    ? content
    : content.map((part) => ('text' in part ? String(part.text) : `[${part.type}]`)).join('\n');

/** A resumed session's messages as transcript entries (tool calls paired with their results). */
export const entriesFromMessages = (messages: ChatMessage[]): NewEntry[] => {
  const entries: NewEntry[] = [];
  const cards = new Map<string, Extract<NewEntry, { kind: 'tool' }>>();
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        entries.push({ kind: 'user', text: userText(message.content), attachments: [] });
        break;
      case 'assistant':
        if (message.content || message.reasoning)
          entries.push({
            kind: 'assistant',
            text: message.content,
            reasoning: message.reasoning ?? '',
          });
        for (const call of message.toolCalls ?? []) {
          const card = {
            kind: 'tool' as const,
            callId: call.id,
            name: call.name,
            args: call.args,
            status: 'done' as const,
            startedAt: 0,
          };
          cards.set(call.id, card);
          entries.push(card);
        }
        break;
      case 'tool': {
        const card = cards.get(message.toolCallId);
        if (card)
          Object.assign(card, {
            status: message.result.ok
              ? 'done'
              : message.result.error.code === 'denied'
                ? 'denied'
                : 'error',
            summary: summarizeResult(message.result),
            detail: resultDetail(message.result),
          });
        break;
      }
    }
  }
  return entries;
};
