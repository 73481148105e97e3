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

/** Creates a parser; `makeId` names each call (the text protocol has no ids of its own). */
export const createTextProtocolParser = (makeId: () => string): TextProtocolParser => {
  let mode: Mode = 'text';
  let buffer = '';
  let calls = 0;
  let out: TextProtocolEvent[] = [];
  // In `object` mode `buffer` holds only text not scanned yet: what was scanned moved to `parts`,
  // and the scan's state is kept here. A long call streamed in small chunks is thus scanned once,
  // and never rebuilt into one growing string (each look at such a string copies all of it).
  let parts: string[] = [];
  let partsLength = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;

  /**
   * Scans `text` on from where the last scan stopped: the index in `text` just past the `}`
   * closing the object, or -1 if it is not closed yet.
   */
  const scanObject = (text: string): number => {
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) return i + 1;
    }
    return -1;
  };

  const emitText = (text: string) => {
    if (text) out.push({ type: 'text', text });
  };
  const invalid = (raw: string, message: string, name = '') => {
    calls++;
    out.push({ type: 'tool-call-invalid', id: makeId(), name, raw, message });
  };
  const emitCall = (raw: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      invalid(raw, `TOOL_CALL is not valid JSON (${(error as Error).message}). ${FORMAT_HINT}`);
      return;
    }
    const name = isObject(parsed) && typeof parsed['name'] === 'string' ? parsed['name'] : '';
    if (!isObject(parsed) || !name) {
      invalid(raw, `TOOL_CALL needs "name" (a string) and "args" (an object). ${FORMAT_HINT}`);
      return;
    }
    const args = parsed['args'] ?? parsed['arguments'] ?? parsed['parameters'] ?? {};
    if (!isObject(args)) {
      invalid(raw, `TOOL_CALL "args" must be a JSON object. ${FORMAT_HINT}`, name);
      return;
    }
    calls++;
    out.push({ type: 'tool-call', call: { id: makeId(), name, args } });
  };

  // One step of the state machine; returns whether it made progress.
  const step = (final: boolean): boolean => {
    switch (mode) {
      case 'text': {
        const at = buffer.indexOf(TOOL_CALL_MARKER);
        if (at >= 0) {
          emitText(buffer.slice(0, at).replace(FENCE_BEFORE_CALL, ''));
          buffer = buffer.slice(at + TOOL_CALL_MARKER.length);
          mode = 'json';
          return true;
        }
        const keep = final ? 0 : heldBackLength(buffer);
        emitText(buffer.slice(0, buffer.length - keep));
        buffer = buffer.slice(buffer.length - keep);
        return false;
      }
      case 'json': {
        const start = buffer.search(/\S/);
        if (start < 0) {
          if (!final) return false;
          invalid('', `nothing follows TOOL_CALL:. ${FORMAT_HINT}`);
          buffer = '';
          mode = 'after-call';
          return true;
        }
        if (buffer[start] !== '{') {
          const newline = buffer.indexOf('\n', start);
          if (newline < 0 && !final) return false;
          const raw = buffer.slice(start, newline < 0 ? undefined : newline).trim();
          invalid(
            raw,
            `expected a JSON object after TOOL_CALL:, found ${JSON.stringify(raw)}. ${FORMAT_HINT}`,
          );
          buffer = newline < 0 ? '' : buffer.slice(newline);
          mode = 'after-call';
          return true;
        }
        buffer = buffer.slice(start);
        parts = [];
        partsLength = 0;
        depth = 0;
        inString = false;
        escaped = false;
        mode = 'object';
        return true;
      }
      case 'object': {
        const end = scanObject(buffer);
        if (end < 0) {
          parts.push(buffer);
          partsLength += buffer.length;
          buffer = '';
          if (!final && partsLength <= MAX_CALL_CHARS) return false;
          invalid(parts.join('').trim(), `the JSON after TOOL_CALL: is incomplete. ${FORMAT_HINT}`);
          parts = [];
          mode = 'after-call';
          return true;
        }
        parts.push(buffer.slice(0, end));
        emitCall(parts.join(''));
        parts = [];
        buffer = buffer.slice(end);
        mode = 'after-call';
        return true;
      }
      case 'after-call': {
        for (;;) {
          const skip = /^\s+/.exec(buffer) ?? /^```[\w-]*(?=\s)/.exec(buffer);
          if (!skip) break;
          buffer = buffer.slice(skip[0].length);
        }
        if (buffer.startsWith(TOOL_CALL_MARKER)) {
          buffer = buffer.slice(TOOL_CALL_MARKER.length);
          mode = 'json';
          return true;
        }
        if (buffer === '') return false;
        if (!final && (TOOL_CALL_MARKER.startsWith(buffer) || /^`{1,3}[\w-]*$/.test(buffer)))
          return false;
        // Whatever the model writes after its calls (often an invented result) is dropped.
        mode = 'stopped';
        buffer = '';
        return true;
      }
      case 'stopped':
        return false;
    }
  };

  const drain = (): TextProtocolEvent[] => {
    const events = out;
    out = [];
    return events;
  };

  return {
    push(chunk) {
      if (mode === 'stopped') return [];
      buffer += chunk;
      while (step(false));
      return drain();
    },
    end() {
      while (step(true));
      return drain();
    },
    get isStopped() {
      return mode === 'stopped';
    },
    get callCount() {
      return calls;
    },
  };
};

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
