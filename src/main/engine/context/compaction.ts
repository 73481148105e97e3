import type { ChatMessage } from '../../../workers/protocol/api.ts';
import { messageTokens } from './tokens.ts';

// Compaction: when a session outgrows its model's window, first the outputs of old tool calls
// are cleared (each replaced by a stub naming the file that holds it), then — if that is not
// enough — the older part of the conversation is summarized by a model, the newest turns kept
// verbatim. Nothing is deleted: the transcript keeps every message, and a compaction is a marker
// (what was cleared, where the kept part starts, the summary) that `applyCompaction` replays.

/** A compaction as the transcript records it. */
export interface CompactionMarker {
  /** Tool call ids whose outputs were cleared, and the file each output was saved to. */
  cleared: { id: string; file: string }[];
  /**
   * How many user messages (with all that followed each) `summary` replaces: the kept part starts
   * at the next one. Counted in user messages, which nothing inserts later, not by index.
   */
  summarizedTurns?: number;
  summary?: string;
}

/** The stub a cleared output leaves in the conversation. */
export const clearedStub = (file: string): string =>
  `[this output was cleared to save context; the full output is in ${file} — read it with read_file if you need it again]`;

/** The summary as the model reads it, in the system prompt. */
export const summarySection = (summary: string): string =>
  `## Summary of the conversation so far\n\nThe earlier part of this session was summarized to save context:\n\n${summary}`;

/**
 * The messages a request carries after the markers, in order: cleared outputs as stubs, and what
 * a summary replaced left out. Returns the summary in effect (the last), for the system prompt.
 */
export const applyCompaction = (
  messages: readonly ChatMessage[],
  markers: readonly CompactionMarker[],
): { messages: ChatMessage[]; summary?: string } => {
  const cleared = new Map(markers.flatMap((m) => m.cleared.map((c) => [c.id, c.file] as const)));
  const last = [...markers].reverse().find((m) => m.summary !== undefined);
  const from = indexOfUser(messages, last?.summarizedTurns ?? 0);
  const kept = messages.slice(from).map((m): ChatMessage => {
    const file = m.role === 'tool' ? cleared.get(m.toolCallId) : undefined;
    return file && m.role === 'tool'
      ? { ...m, result: { ok: true, output: clearedStub(file) } }
      : m;
  });
  return { messages: kept, ...(last?.summary !== undefined ? { summary: last.summary } : {}) };
};

/** The index of the `n`th user message (0-based; the length when there are fewer). */
export const indexOfUser = (messages: readonly ChatMessage[], n: number): number => {
  if (n <= 0) return 0;
  let seen = 0;
  for (let i = 0; i < messages.length; i++)
    if (messages[i]!.role === 'user' && seen++ === n) return i;
  return messages.length;
};

/** How many user messages come before `index`. */
export const usersBefore = (messages: readonly ChatMessage[], index: number): number =>
  messages.slice(0, index).filter((m) => m.role === 'user').length;

/** Tokens of `messages` (unscaled estimate). */
export const tokensOf = (messages: readonly ChatMessage[]): number =>
  messages.reduce((sum, m) => sum + messageTokens(m), 0);

/**
 * The tool outputs to clear: every one older than the newest `protect` tokens of the
 * conversation, largest savings first, until `need` tokens are saved (all when `need` is 0).
 */
export const outputsToClear = (
  messages: readonly ChatMessage[],
  alreadyCleared: ReadonlySet<string>,
  protect: number,
  need: number,
): Extract<ChatMessage, { role: 'tool' }>[] => {
  let tail = 0;
  let boundary = messages.length;
  while (boundary > 0 && tail + messageTokens(messages[boundary - 1]!) <= protect) {
    boundary--;
    tail += messageTokens(messages[boundary]!);
  }
  const old = messages
    .slice(0, boundary)
    .filter(
      (m): m is Extract<ChatMessage, { role: 'tool' }> =>
        m.role === 'tool' && !alreadyCleared.has(m.toolCallId),
    )
    .filter((m) => messageTokens(m) > 64)
    .sort((a, b) => messageTokens(b) - messageTokens(a));
  if (need <= 0) return old;
  const chosen: typeof old = [];
  let saved = 0;
  for (const m of old) {
    if (saved >= need) break;
    chosen.push(m);
    saved += messageTokens(m) - 40;
  }
  return chosen;
};

/**
 * Where the kept part begins: the start of the oldest user turn such that what follows fits in
 * `keep` tokens — always a user message, so no tool call is parted from its result. Undefined
 * when there is nothing older to summarize (one turn only).
 */
export const summarySplit = (
  messages: readonly ChatMessage[],
  keep: number,
  from = 0,
): number | undefined => {
  let tail = 0;
  let split: number | undefined;
  for (let i = messages.length - 1; i > from; i--) {
    tail += messageTokens(messages[i]!);
    if (tail > keep && split !== undefined) break;
    if (messages[i]!.role === 'user') split = i;
  }
  return split;
};

/** Characters of conversation given to the summarizing model per message, at most. */
const MAX_MESSAGE_CHARS = 4000;

const render = (message: ChatMessage): string => {
  const cut = (text: string) =>
    text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)} […]` : text;
  switch (message.role) {
    case 'system':
      return '';
    case 'user':
      return `USER: ${cut(typeof message.content === 'string' ? message.content : message.content.map((p) => (p.type === 'text' ? p.text : '[image]')).join(' '))}`;
    case 'assistant':
      return `ASSISTANT: ${cut(message.content)}${message.toolCalls?.length ? `\n  (called ${message.toolCalls.map((c) => `${c.name} ${cut(JSON.stringify(c.args))}`).join('; ')})` : ''}`;
    case 'tool':
      return `TOOL ${message.name}: ${cut(message.result.ok ? message.result.output : `error: ${message.result.error.message}`)}`;
  }
};

/** Tokens a summary may use. */
export const SUMMARY_TOKENS = 4000;

/** The request that asks a model to summarize `older` (with the previous summary, if any). */
export const summaryRequest = (
  older: readonly ChatMessage[],
  previous: string | undefined,
  focus: string | undefined,
): ChatMessage[] => [
  {
    role: 'system',
    content:
      'You summarize a working session between a user and a coding assistant so that the assistant can continue it without the full history. ' +
      `Write at most ${SUMMARY_TOKENS * 3} characters of plain text with these sections: Goals (what the user wants), Decisions (what was decided and why), ` +
      'Files touched (paths, and what changed in each), State (what is done, what was found), Open tasks (what remains, in order). ' +
      'Keep exact names, paths, commands, error messages and numbers; leave out chit-chat and anything superseded.' +
      (focus ? ` Focus on: ${focus}.` : ''),
  },
  {
    role: 'user',
    content:
      (previous ? `Summary of what came before:\n${previous}\n\n` : '') +
      `The conversation to summarize:\n\n${older.map(render).filter(Boolean).join('\n')}`,
  },
];
