import type { ToolCall, ToolSpec } from '../protocol/api.ts';
import { isObject } from '../shared/is-object.ts';

/** The line prefix a model writes to call a tool under the text protocol. */
export const TOOL_CALL_MARKER = 'TOOL_CALL:';
/** The line prefix of a result given back to the model. */
export const TOOL_RESULT_MARKER = 'TOOL_RESULT:';

export type TextProtocolEvent =
  | { type: 'text'; text: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'tool-call-invalid'; id: string; name: string; raw: string; message: string };

/**
 * Streaming parser for `TOOL_CALL: {"name": …, "args": {…}}`. Feed it chunks in any split; it
 * returns plain text (calls and their code fences removed) and calls. After a call, anything but
 * another call (or whitespace, fences) stops it: `isStopped` says the stream should be aborted.
 */
export interface TextProtocolParser {
  push(chunk: string): TextProtocolEvent[];
  /** The stream ended: flush held-back text and report an unfinished call. */
  end(): TextProtocolEvent[];
  readonly isStopped: boolean;
  /** Calls seen so far, valid or not. */
  readonly callCount: number;
}

// `json` looks for the `{` after `TOOL_CALL:`; `object` reads the object from there to its `}`.
type Mode = 'text' | 'json' | 'object' | 'after-call' | 'stopped';

const MAX_CALL_CHARS = 500_000;
const FORMAT_HINT = 'Write one line: TOOL_CALL: {"name": "<tool>", "args": {…}}';
// A code fence opening right before a call, with the whitespace after it.
const FENCE_BEFORE_CALL = /```[\w-]*[ \t]*\r?\n?[ \t]*$/;
const PARTIAL_BACKTICKS = /`{1,2}$/;

/** How many trailing characters might still become a fence plus `TOOL_CALL:`. */
const heldBackLength = (text: string): number => {
  let keep = 0;
  for (let k = Math.min(TOOL_CALL_MARKER.length - 1, text.length); k > 0; k--) {
    if (TOOL_CALL_MARKER.startsWith(text.slice(text.length - k))) {
      keep = k;
      break;
    }
  }
  const before = text.slice(0, text.length - keep);
  const fence = FENCE_BEFORE_CALL.exec(before) ?? PARTIAL_BACKTICKS.exec(before);
  return fence ? text.length - fence.index : keep;
};

/**
 * Where a JSON object's scan stopped, kept between chunks: a long call streamed in small chunks
 * is scanned once, and never rebuilt into one growing string (each look at such a string copies
 * all of it).
 */
class ObjectScan {
  parts: string[] = [];
  length = 0;
  #depth = 0;
  #inString = false;
  #escaped = false;

  /** The index in `text` just past the `}` closing the object, or -1 if it is not closed yet. */
  scan(text: string): number {
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === '\\') this.#escaped = true;
        else if (c === '"') this.#inString = false;
      } else if (c === '"') this.#inString = true;
      else if (c === '{') this.#depth++;
      else if (c === '}' && --this.#depth === 0) return i + 1;
    }
    return -1;
  }

  keep(text: string): void {
    this.parts.push(text);
    this.length += text.length;
  }
}

/** The arguments of a parsed `TOOL_CALL`, or why they cannot be: its name, args, or an error. */
const readCall = (
  raw: string,
): { name: string; args: Record<string, unknown> } | { name: string; error: string } => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return {
      name: '',
      error: `TOOL_CALL is not valid JSON (${(error as Error).message}). ${FORMAT_HINT}`,
    };
  }
  const name = isObject(parsed) && typeof parsed['name'] === 'string' ? parsed['name'] : '';
  if (!isObject(parsed) || !name)
    return {
      name: '',
      error: `TOOL_CALL needs "name" (a string) and "args" (an object). ${FORMAT_HINT}`,
    };
  const args = parsed['args'] ?? parsed['arguments'] ?? parsed['parameters'] ?? {};
  if (!isObject(args))
    return { name, error: `TOOL_CALL "args" must be a JSON object. ${FORMAT_HINT}` };
  return { name, args };
};

/** The parser as a state machine: one method per mode, each saying whether it made progress. */
class Parser implements TextProtocolParser {
  #mode: Mode = 'text';
  #buffer = '';
  #calls = 0;
  #out: TextProtocolEvent[] = [];
  #object = new ObjectScan();

  constructor(private readonly makeId: () => string) {}

  push(chunk: string): TextProtocolEvent[] {
    if (this.#mode === 'stopped') return [];
    this.#buffer += chunk;
    while (this.#step(false));
    return this.#drain();
  }

  end(): TextProtocolEvent[] {
    while (this.#step(true));
    return this.#drain();
  }

  get isStopped(): boolean {
    return this.#mode === 'stopped';
  }

  get callCount(): number {
    return this.#calls;
  }

  #drain(): TextProtocolEvent[] {
    const events = this.#out;
    this.#out = [];
    return events;
  }

  #text(text: string): void {
    if (text) this.#out.push({ type: 'text', text });
  }

  #invalid(raw: string, message: string, name = ''): void {
    this.#calls++;
    this.#out.push({ type: 'tool-call-invalid', id: this.makeId(), name, raw, message });
  }

  #call(raw: string): void {
    const read = readCall(raw);
    if ('error' in read) return this.#invalid(raw, read.error, read.name);
    this.#calls++;
    this.#out.push({
      type: 'tool-call',
      call: { id: this.makeId(), name: read.name, args: read.args },
    });
  }

  #step(final: boolean): boolean {
    switch (this.#mode) {
      case 'text':
        return this.#inText(final);
      case 'json':
        return this.#beforeObject(final);
      case 'object':
        return this.#inObject(final);
      case 'after-call':
        return this.#afterCall(final);
      case 'stopped':
        return false;
    }
  }

  /** Plain text until a `TOOL_CALL:`; what might still become one is held back. */
  #inText(final: boolean): boolean {
    const at = this.#buffer.indexOf(TOOL_CALL_MARKER);
    if (at >= 0) {
      this.#text(this.#buffer.slice(0, at).replace(FENCE_BEFORE_CALL, ''));
      this.#buffer = this.#buffer.slice(at + TOOL_CALL_MARKER.length);
      this.#mode = 'json';
      return true;
    }
    const keep = final ? 0 : heldBackLength(this.#buffer);
    this.#text(this.#buffer.slice(0, this.#buffer.length - keep));
    this.#buffer = this.#buffer.slice(this.#buffer.length - keep);
    return false;
  }

  /** After `TOOL_CALL:`: the `{` that opens the call, or an error for what is there instead. */
  #beforeObject(final: boolean): boolean {
    const start = this.#buffer.search(/\S/);
    if (start < 0) {
      if (!final) return false;
      this.#invalid('', `nothing follows TOOL_CALL:. ${FORMAT_HINT}`);
      this.#buffer = '';
      this.#mode = 'after-call';
      return true;
    }
    if (this.#buffer[start] !== '{') {
      const newline = this.#buffer.indexOf('\n', start);
      if (newline < 0 && !final) return false;
      const raw = this.#buffer.slice(start, newline < 0 ? undefined : newline).trim();
      this.#invalid(
        raw,
        `expected a JSON object after TOOL_CALL:, found ${JSON.stringify(raw)}. ${FORMAT_HINT}`,
      );
      this.#buffer = newline < 0 ? '' : this.#buffer.slice(newline);
      this.#mode = 'after-call';
      return true;
    }
    this.#buffer = this.#buffer.slice(start);
    this.#object = new ObjectScan();
    this.#mode = 'object';
    return true;
  }

  /** The call's object, to its closing `}`; too long or unfinished at the end is an error. */
  #inObject(final: boolean): boolean {
    const end = this.#object.scan(this.#buffer);
    if (end < 0) {
      this.#object.keep(this.#buffer);
      this.#buffer = '';
      if (!final && this.#object.length <= MAX_CALL_CHARS) return false;
      this.#invalid(
        this.#object.parts.join('').trim(),
        `the JSON after TOOL_CALL: is incomplete. ${FORMAT_HINT}`,
      );
      this.#mode = 'after-call';
      return true;
    }
    this.#object.keep(this.#buffer.slice(0, end));
    this.#call(this.#object.parts.join(''));
    this.#buffer = this.#buffer.slice(end);
    this.#mode = 'after-call';
    return true;
  }

  /** After a call: another call, whitespace or fences; anything else stops the stream. */
  #afterCall(final: boolean): boolean {
    for (;;) {
      const skip = /^\s+/.exec(this.#buffer) ?? /^```[\w-]*(?=\s)/.exec(this.#buffer);
      if (!skip) break;
      this.#buffer = this.#buffer.slice(skip[0].length);
    }
    if (this.#buffer.startsWith(TOOL_CALL_MARKER)) {
      this.#buffer = this.#buffer.slice(TOOL_CALL_MARKER.length);
      this.#mode = 'json';
      return true;
    }
    if (this.#buffer === '') return false;
    if (
      !final &&
      (TOOL_CALL_MARKER.startsWith(this.#buffer) || /^`{1,3}[\w-]*$/.test(this.#buffer))
    )
      return false;
    // Whatever the model writes after its calls (often an invented result) is dropped.
    this.#mode = 'stopped';
    this.#buffer = '';
    return true;
  }
}

/** Creates a parser; `makeId` names each call (the text protocol has no ids of its own). */
export const createTextProtocolParser = (makeId: () => string): TextProtocolParser =>
  new Parser(makeId);

/** The `TOOL_CALL:` line for a call, as the model should have written it. */
export const formatToolCall = (call: { name: string; args: Record<string, unknown> }): string =>
  `${TOOL_CALL_MARKER} ${JSON.stringify({ name: call.name, args: call.args })}`;

/** The `TOOL_RESULT:` line given back to the model. */
export const formatToolResult = (name: string, result: unknown): string =>
  `${TOOL_RESULT_MARKER} ${JSON.stringify({ name, result })}`;

/** The system-prompt appendix that teaches a model without native tools the exact format. */
export const textProtocolAppendix = (tools: ToolSpec[]): string =>
  [
    '# Tools',
    '',
    'You can call tools. To call one, write a line on its own, exactly in this format:',
    '',
    `${TOOL_CALL_MARKER} {"name": "<tool name>", "args": {<arguments as JSON>}}`,
    '',
    '- The whole call, JSON included, is on that one line. For several calls, write several lines.',
    '- After your calls, stop writing and wait. Each result comes back in the next message as:',
    `  ${TOOL_RESULT_MARKER} {"name": "<tool name>", "result": <the output>}`,
    `- Never write ${TOOL_RESULT_MARKER} yourself. When you need no tool, answer normally.`,
    '',
    'Available tools:',
    ...tools.flatMap((tool) => [
      '',
      `## ${tool.name}`,
      tool.description,
      `Arguments (JSON schema): ${JSON.stringify(tool.inputSchema)}`,
    ]),
  ].join('\n');
