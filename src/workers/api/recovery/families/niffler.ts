import { isObject } from '../../../shared/is-object.ts';
import { BalancedScan, MAX_REGION_CHARS } from '../scan.ts';
import type { Family, RawCall, Reader, Step } from '../types.ts';
import { TOOL_CALL_MARKER } from '../../text-protocol.ts';

// niffler's own text protocol (text-protocol.ts teaches it): one line
// `TOOL_CALL: {"name": "<tool>", "args": {…}}`. The model was taught this syntax, so a call it
// could not write is reported (the model reads the error and writes it again) instead of shown.

const FORMAT_HINT = 'Write one line: TOOL_CALL: {"name": "<tool>", "args": {…}}';

/** The call a `TOOL_CALL:` object holds, or why it cannot be read. */
const readCall = (raw: string): RawCall => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    const why = `TOOL_CALL is not valid JSON (${(error as Error).message}). ${FORMAT_HINT}`;
    return { name: '', raw, error: why };
  }
  const name = isObject(parsed) && typeof parsed['name'] === 'string' ? parsed['name'] : '';
  if (!isObject(parsed) || !name)
    return {
      name: '',
      raw,
      error: `TOOL_CALL needs "name" (a string) and "args" (an object). ${FORMAT_HINT}`,
    };
  const args = parsed['args'] ?? parsed['arguments'] ?? parsed['parameters'] ?? {};
  if (!isObject(args))
    return { name, raw, error: `TOOL_CALL "args" must be a JSON object. ${FORMAT_HINT}` };
  return { name, args };
};

const invalid = (raw: string, error: string, rest: string): Step => ({
  kind: 'calls',
  calls: [{ name: '', raw, error }],
  rest,
});

const notAnObject = (raw: string, rest: string): Step =>
  invalid(
    raw,
    raw
      ? `expected a JSON object after TOOL_CALL:, found ${JSON.stringify(raw)}. ${FORMAT_HINT}`
      : `nothing follows TOOL_CALL:. ${FORMAT_HINT}`,
    rest,
  );

const incomplete = (raw: string): Step =>
  invalid(raw.trim(), `the JSON after TOOL_CALL: is incomplete. ${FORMAT_HINT}`, '');

/** After `TOOL_CALL:`: white space, then one JSON object; anything else is a call it cannot read. */
const reader = (): Reader => {
  const scan = new BalancedScan('{');
  /** What came before the object started (white space, or the line written instead). */
  let before = '';
  let started = false;
  const scanned = (found: ReturnType<BalancedScan['push']>): Step => {
    if (found === 'bad') return incomplete(scan.partial());
    if (found) return { kind: 'calls', calls: [readCall(found.value)], rest: found.rest };
    return scan.length > MAX_REGION_CHARS ? incomplete(scan.partial()) : { kind: 'more' };
  };
  return {
    feed(chunk) {
      if (started) return scanned(scan.push(chunk));
      before += chunk;
      const at = before.search(/\S/);
      if (at < 0) return { kind: 'more' };
      if (before[at] === '{') {
        started = true;
        return scanned(scan.push(before.slice(at)));
      }
      const newline = before.indexOf('\n', at);
      if (newline < 0)
        return before.length > 4096 ? notAnObject(before.trim(), '') : { kind: 'more' };
      return notAnObject(before.slice(at, newline).trim(), before.slice(newline));
    },
    finish: () => (started ? incomplete(scan.partial()) : notAnObject(before.trim(), '')),
  };
};

export const niffler: Family = {
  id: 'niffler',
  models: "niffler's own TOOL_CALL: protocol (any model it is taught to)",
  openers: [{ text: TOOL_CALL_MARKER }],
  start: reader,
};
