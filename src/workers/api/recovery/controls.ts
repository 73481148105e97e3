import type { OpenerMatch } from './types.ts';

// What a server lets through that is no call: thinking in tags, which is reasoning, and the
// control tokens of chat templates, which never belong in an answer.

/** Thinking blocks a model opens its message with: reasoning up to their closing tag. */
export const THINK_BLOCKS: readonly { open: string; close: readonly string[] }[] = [
  { open: '<think>', close: ['</think>'] },
  { open: '<thinking>', close: ['</thinking>'] },
  { open: '<seed:think>', close: ['</seed:think>'] },
  { open: '<|START_THINKING|>', close: ['<|END_THINKING|>'] },
];

/** Tokens that end the assistant's turn: after a call, whatever follows them is not the answer. */
const TURN_ENDS = new Set([
  '<|im_end|>',
  '<|im_start|>',
  '<|eot_id|>',
  '<|eom_id|>',
  '<|eot|>',
  '<|eom|>',
  '<|end|>',
  '<|return|>',
  '<|call|>',
  '<|endoftext|>',
  '<|end_of_text|>',
  '<|start_header_id|>',
  '<|start_of_role|>',
  '<|END_OF_TURN_TOKEN|>',
  '<|START_OF_TURN_TOKEN|>',
  '<|user|>',
  '<|observation|>',
  '<end_of_turn>',
  '<start_of_turn>',
  '<｜end▁of▁sentence｜>',
  '<｜User｜>',
]);

/** Tokens that open a turn: their role word and the header's end go with them. */
const ROLE_HEADERS =
  /^(<\|im_start\|>|<\|start_header_id\|>|<\|start_of_role\|>|<start_of_turn>)(?:[a-z_]+)?(?:<\|end_header_id\|>|<\|end_of_role\|>)?[ \t]*\r?\n?/;

/**
 * Literal tags that are stray when no family claimed them: a thinking block's end whose start was
 * in the prompt, Gemma's turn markers.
 */
const STRAY_TAGS = ['</think>', '<end_of_turn>', '<start_of_turn>'];

/** `<|name|>` (ASCII bars) or `<｜name｜>` (DeepSeek's full-width bars), at most 48 long. */
const BARRED = /^<([|｜])[^\s<>|｜]{1,48}\1>/;

/**
 * A control token at `i`: its length (a turn header with its role), 0 while the text ends inside
 * one, -1 when there is none.
 */
export const controlToken: OpenerMatch = (text, i) => {
  if (text[i] !== '<') return -1;
  if (i + 1 === text.length) return 0;
  // What follows `<` in every token: a bar, `/think>`, `end_of_turn>` or `start_of_turn>`.
  if (!'|｜/es'.includes(text[i + 1]!)) return -1;
  const rest = text.slice(i, i + 80);
  const header = ROLE_HEADERS.exec(rest);
  if (header) {
    // A role word and a newline may still come.
    if (header[0].length === rest.length && rest.length < 80) return 0;
    return header[0].length;
  }
  const barred = BARRED.exec(rest);
  if (barred) return barred[0].length;
  for (const tag of STRAY_TAGS) {
    if (rest.startsWith(tag)) return tag.length;
    if (tag.startsWith(rest)) return 0;
  }
  // The text ends inside what may still be a barred token.
  if (/^<([|｜])[^\s<>|｜]{0,48}$/.test(rest) || /^<([|｜])[^\s<>|｜]{1,48}[|｜]$/.test(rest))
    return 0;
  return -1;
};

/** Whether a control token ends the turn (`<|im_end|>`, `<|eot_id|>`, `<｜end▁of▁sentence｜>`…). */
export const endsTurn = (token: string): boolean => {
  const bare = /^<[^>]*>/.exec(token)?.[0] ?? token;
  return TURN_ENDS.has(bare);
};
