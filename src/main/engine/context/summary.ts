import type { ChatMessage } from '../../../workers/protocol/api.ts';
import { estimateText, ESTIMATE_MARGIN } from './tokens.ts';

// Summaries of the turns a compaction takes out of the request: asked of a model in requests
// that fit its own window (the conversation in chunks when it is long), bounded in size, and —
// when the model fails, answers nothing or cannot be reached — replaced by niffler's outline of
// those turns, so that a compaction never depends on the model to succeed.

/** Tokens a summary may use at most, whatever the window. */
const SUMMARY_TOKENS = 4000;
/** Share of the window a summary may use. */
const SUMMARY_SHARE = 0.1;
/** Characters of conversation given to the summarizing model per message, at most. */
const MAX_MESSAGE_CHARS = 4000;
/** Tokens a summary request's instructions and framing take (estimated generously). */
const INSTRUCTION_TOKENS = 300;

/** The tokens a summary may take in a request to a model with `window` tokens. */
export const summaryBound = (window: number): number =>
  Math.min(SUMMARY_TOKENS, Math.floor(window * SUMMARY_SHARE));

const contentText = (message: Extract<ChatMessage, { role: 'user' }>): string =>
  typeof message.content === 'string'
    ? message.content
    : message.content.map((p) => (p.type === 'text' ? p.text : '[image]')).join(' ');

const render = (message: ChatMessage, max: number): string => {
  const cut = (text: string) => (text.length > max ? `${text.slice(0, max)} […]` : text);
  switch (message.role) {
    case 'system':
      return '';
    case 'user':
      return `USER: ${cut(contentText(message))}`;
    case 'assistant':
      return `ASSISTANT: ${cut(message.content)}${message.toolCalls?.length ? `\n  (called ${message.toolCalls.map((c) => `${c.name} ${cut(JSON.stringify(c.args))}`).join('; ')})` : ''}`;
    case 'tool':
      return `TOOL ${message.name}: ${cut(message.result.ok ? message.result.output : `error: ${message.result.error.message}`)}`;
  }
};

/** The request that asks a model to summarize `older` (with the previous summary, if any). */
export const summaryRequest = (
  older: readonly ChatMessage[],
  previous: string | undefined,
  focus: string | undefined,
  maxTokens = SUMMARY_TOKENS,
  maxMessageChars = MAX_MESSAGE_CHARS,
): ChatMessage[] => [
  {
    role: 'system',
    content:
      'You summarize a working session between a user and a coding assistant so that the assistant can continue it without the full history. ' +
      `Write at most ${maxTokens * 3} characters of plain text with these sections: Goals (what the user wants), Decisions (what was decided and why), ` +
      'Files touched (paths, and what changed in each), State (what is done, what was found), Open tasks (what remains, in order). ' +
      'Keep exact names, paths, commands, error messages and numbers; leave out chit-chat and anything superseded.' +
      (focus ? ` Focus on: ${focus}.` : ''),
  },
  {
    role: 'user',
    content:
      (previous ? `Summary of what came before:\n${previous}\n\n` : '') +
      `The conversation to summarize:\n\n${older
        .map((m) => render(m, maxMessageChars))
        .filter(Boolean)
        .join('\n')}`,
  },
];

/** `text` cut to about `tokens` tokens (at a line end where one is near), saying it was cut. */
const boundText = (text: string, tokens: number): string => {
  if (estimateText(text) <= tokens) return text;
  const note = '\n[cut to fit the context window]';
  const chars = Math.max(0, tokens * 4 - note.length);
  if (chars === 0) return '';
  const cut = text.slice(0, chars);
  const line = cut.lastIndexOf('\n');
  return `${line > chars * 0.8 ? cut.slice(0, line) : cut}${note}`;
};

/** `messages` in runs of at most `chars` rendered characters (at least one message each). */
const chunks = (
  messages: readonly ChatMessage[],
  chars: number,
  maxMessageChars: number,
): ChatMessage[][] => {
  const out: ChatMessage[][] = [];
  let current: ChatMessage[] = [];
  let size = 0;
  for (const message of messages) {
    const weight = render(message, maxMessageChars).length + 1;
    if (current.length && size + weight > chars) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += weight;
  }
  if (current.length) out.push(current);
  return out;
};

/** The model that writes summaries, as the summarizer sees it. */
export interface SummaryModel {
  window: number;
  /** Its calibrated scale (see `Calibration`). */
  scale: number;
  ask(request: ChatMessage[], maxTokens: number, signal: AbortSignal): Promise<string>;
}

/** How a chunked summary is asked for: the room each request has in the summary model's window. */
const plan = (model: SummaryModel, bound: number, previous: string | undefined) => {
  const answer = Math.min(SUMMARY_TOKENS, Math.ceil(bound * 1.25) + 64);
  const input = Math.floor((model.window - answer) / (1 + ESTIMATE_MARGIN));
  // The previous summary (at most `bound`) rides in every request after the first.
  const prior = Math.max(estimateText(previous ?? ''), bound) * model.scale;
  const room = input - INSTRUCTION_TOKENS * model.scale - prior;
  const chars = Math.floor((room / model.scale) * 4);
  return { answer, chars, maxMessageChars: Math.min(MAX_MESSAGE_CHARS, Math.floor(chars / 2)) };
};

/**
 * A model's summary of `part` (after `previous`), at most `within` tokens, in requests that fit the
 * model's window. Throws when the model fails or answers nothing; the caller outlines instead.
 */
export const modelSummary = async (
  model: SummaryModel,
  part: readonly ChatMessage[],
  previous: string | undefined,
  within: number,
  focus: string | undefined,
  signal: AbortSignal,
): Promise<string> => {
  // A model with a smaller window than the turn's writes a smaller summary.
  const bound = Math.min(within, summaryBound(model.window));
  const { answer, chars, maxMessageChars } = plan(model, bound, previous);
  if (maxMessageChars < 200)
    throw new Error(
      `the summary model's window (${model.window} tokens) has no room for the conversation`,
    );
  let summary = previous;
  for (const chunk of chunks(part, chars, maxMessageChars)) {
    const request = summaryRequest(chunk, summary, focus, bound, maxMessageChars);
    const text = (await model.ask(request, answer, signal)).trim();
    if (!text) throw new Error('the summary model answered with nothing');
    summary = boundText(text, bound);
  }
  return summary ?? '';
};

/**
 * niffler's own outline of `part`, without a model: each user message begun, the tools called,
 * each answer begun — after the previous summary — within `bound` tokens.
 */
export const outline = (
  part: readonly ChatMessage[],
  previous: string | undefined,
  why: string,
  bound: number,
): string => {
  const lines = [
    `Outline of earlier turns by niffler (no model summary: ${why}); every message is whole in the session's transcript.`,
    ...(previous ? ['Before them:', previous] : []),
  ];
  const begun = (text: string) => (text.length > 160 ? `${text.slice(0, 157)}...` : text);
  for (const m of part) {
    if (m.role === 'user') lines.push(`- user: ${begun(contentText(m).replace(/\s+/g, ' '))}`);
    else if (m.role === 'assistant') {
      if (m.toolCalls?.length)
        lines.push(
          `  called ${m.toolCalls.map((c) => `${c.name} ${begun(JSON.stringify(c.args))}`).join('; ')}`,
        );
      if (m.content.trim()) lines.push(`  answered: ${begun(m.content.replace(/\s+/g, ' '))}`);
    }
  }
  return boundText(lines.join('\n'), bound);
};
