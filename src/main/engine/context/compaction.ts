import type { ChatMessage } from '../../../workers/protocol/api.ts';
import type { CompactionMarker } from '../../calls/transcript-entry.ts';
import { messageTokens } from './tokens.ts';

export type { CompactionMarker };

// Compaction: when a session outgrows its model's window, the outputs of tool calls are cleared
// (each replaced by a stub naming the file that holds it) and older parts of the conversation are
// summarized, the newest kept verbatim. Nothing is deleted: the transcript keeps every message,
// and a compaction is a marker (what was cleared, where the kept part starts, the summary) that
// `applyCompaction` replays. What is kept always begins at a user message and never parts a tool
// call from its result.

/** The stub a cleared output leaves in the conversation. */
export const clearedStub = (file: string): string =>
  `[this output was cleared to save context; the full output is in ${file} — read it with read_file if you need it again]`;

/** The summary as the model reads it, in the system prompt. */
export const summarySection = (summary: string): string =>
  `## Summary of the conversation so far\n\nThe earlier part of this session was summarized to save context:\n\n${summary}`;

/** The summary marker in effect: the last one that has a summary. */
export const lastSummary = (markers: readonly CompactionMarker[]): CompactionMarker | undefined =>
  [...markers].reverse().find((m) => m.summary !== undefined);

/** The index of the `n`th user message (0-based; the length when there are fewer). */
const indexOfUser = (messages: readonly ChatMessage[], n: number): number => {
  if (n <= 0) return 0;
  let seen = 0;
  for (let i = 0; i < messages.length; i++)
    if (messages[i]!.role === 'user' && seen++ === n) return i;
  return messages.length;
};

/** How many user messages come before `index`. */
export const usersBefore = (messages: readonly ChatMessage[], index: number): number => {
  let n = 0;
  for (let i = 0; i < index && i < messages.length; i++) if (messages[i]!.role === 'user') n++;
  return n;
};

/**
 * The indices of `messages` a summary marker leaves in the request, in order: from its
 * `summarizedTurns`th user message on, less the `summarizedSteps` messages that follow it.
 */
export const keptIndices = (
  messages: readonly ChatMessage[],
  marker: CompactionMarker | undefined,
): number[] => {
  const from = indexOfUser(messages, marker?.summarizedTurns ?? 0);
  const skip = from < messages.length ? (marker?.summarizedSteps ?? 0) : 0;
  const kept: number[] = [];
  for (let i = from; i < messages.length; i++) if (i === from || i > from + skip) kept.push(i);
  return kept;
};

/** The ids of cleared outputs and their files, over all markers. */
export const clearedFiles = (markers: readonly CompactionMarker[]): Map<string, string> =>
  new Map(markers.flatMap((m) => m.cleared.map((c) => [c.id, c.file] as const)));

/** `message`, its output replaced by the stub when it was cleared. */
export const stubbed = (
  message: ChatMessage,
  cleared: ReadonlyMap<string, string>,
): ChatMessage => {
  const file = message.role === 'tool' ? cleared.get(message.toolCallId) : undefined;
  return file && message.role === 'tool'
    ? { ...message, result: { ok: true, output: clearedStub(file) } }
    : message;
};

/**
 * The messages a request carries after the markers, in order: cleared outputs as stubs, and what
 * a summary replaced left out. Returns the summary in effect (the last), for the system prompt.
 */
export const applyCompaction = (
  messages: readonly ChatMessage[],
  markers: readonly CompactionMarker[],
): { messages: ChatMessage[]; summary?: string } => {
  const cleared = clearedFiles(markers);
  const last = lastSummary(markers);
  const kept = keptIndices(messages, last).map((i) => stubbed(messages[i]!, cleared));
  return { messages: kept, ...(last?.summary !== undefined ? { summary: last.summary } : {}) };
};

/** Tokens of `messages` (unscaled estimate). */
export const tokensOf = (messages: readonly ChatMessage[]): number =>
  messages.reduce((sum, m) => sum + messageTokens(m), 0);

/** The tool messages among `indices` not cleared yet and worth clearing (over 64 tokens). */
/** Outputs never cleared: a skill's instructions hold for the rest of the session. */
const KEPT_OUTPUTS = new Set(['skill']);

export const clearable = (
  messages: readonly ChatMessage[],
  indices: readonly number[],
  alreadyCleared: ReadonlyMap<string, string> | ReadonlySet<string>,
): Extract<ChatMessage, { role: 'tool' }>[] =>
  indices
    .map((i) => messages[i]!)
    .filter(
      (m): m is Extract<ChatMessage, { role: 'tool' }> =>
        m.role === 'tool' &&
        !alreadyCleared.has(m.toolCallId) &&
        !KEPT_OUTPUTS.has(m.name) &&
        messageTokens(m) > 64,
    );

/** `outputs` largest first, as many as it takes to save `need` tokens (all when `need` ≤ 0). */
export const largestUntil = <M extends ChatMessage>(outputs: readonly M[], need: number): M[] => {
  const sorted = [...outputs].sort((a, b) => messageTokens(b) - messageTokens(a));
  if (need <= 0) return sorted;
  const chosen: M[] = [];
  let saved = 0;
  for (const m of sorted) {
    if (saved >= need) break;
    chosen.push(m);
    saved += messageTokens(m) - 40;
  }
  return chosen;
};

/**
 * The position in `indices` (kept messages, in order) where the newest `protect` tokens begin:
 * what comes before it is old. `indices.length` when even the newest message is over `protect`.
 */
export const tailStart = (
  indices: readonly number[],
  protect: number,
  weight: (i: number) => number,
): number => {
  let tail = 0;
  let start = indices.length;
  while (start > 0 && tail + weight(indices[start - 1]!) <= protect) {
    start--;
    tail += weight(indices[start]!);
  }
  return start;
};

/**
 * Outputs never cleared: an activated skill's instructions guide the rest of the session (the
 * Agent Skills guide asks clients to keep them through compaction).
 */

/**
 * The tool outputs to clear: every one older than the newest `protect` tokens of the
 * conversation, largest savings first, until `need` tokens are saved (all when `need` is 0),
 * activated skills' aside.
 */
export const outputsToClear = (
  messages: readonly ChatMessage[],
  alreadyCleared: ReadonlySet<string>,
  protect: number,
  need: number,
): Extract<ChatMessage, { role: 'tool' }>[] => {
  const all = messages.map((_, i) => i);
  const old = all.slice(
    0,
    tailStart(all, protect, (i) => messageTokens(messages[i]!)),
  );
  return largestUntil(clearable(messages, old, alreadyCleared), need);
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
  weight: (i: number) => number = (i) => messageTokens(messages[i]!),
): number | undefined => {
  let tail = 0;
  let split: number | undefined;
  for (let i = messages.length - 1; i > from; i--) {
    tail += weight(i);
    if (tail > keep && split !== undefined) break;
    if (messages[i]!.role === 'user') split = i;
  }
  return split;
};

/** The indices of the user messages after `from`: where a kept part may begin. */
export const userStarts = (messages: readonly ChatMessage[], from: number): number[] => {
  const starts: number[] = [];
  for (let i = from + 1; i < messages.length; i++) if (messages[i]!.role === 'user') starts.push(i);
  return starts;
};

/**
 * The steps of the turn that begins at `user` (a user message): the index of each assistant
 * message after it. A step is that message and the tool results after it.
 */
export const stepStarts = (messages: readonly ChatMessage[], user: number): number[] => {
  const starts: number[] = [];
  for (let i = user + 1; i < messages.length && messages[i]!.role !== 'user'; i++)
    if (messages[i]!.role === 'assistant') starts.push(i);
  return starts;
};
