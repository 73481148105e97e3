import { closedBy } from '../readers.ts';
import type { Family, OpenerMatch, Reader, ReadContext, Step } from '../types.ts';

// A call in a fenced block: what models without a call syntax of their own write when asked for
// tools (qwen2.5-coder through Ollama, many small models):
//   ```json\n{"name": "read_file", "arguments": {"path": "README.md"}}\n```
// The block's body may be any family's call (a JSON object or array, `TOOL_CALL:` lines, a
// `<tool_call>` block). A fenced block is also how prose shows code, so it counts only at the end
// of a message — unless it is labelled `tool_call`, or holds the `TOOL_CALL:` lines of a model
// taught them (the text protocol).

const LANGS = ['', 'json', 'jsonc', 'tool_call', 'tool_calls', 'xml'];
const FENCE = /^```([\w-]*)[ \t]*(\r?\n)?/;

/** A fence line that may open a call at the start of a line: its length, 0 while it may be one. */
const callFence: OpenerMatch = (text, i) => {
  const rest = text.slice(i, i + 24);
  if (rest.length < 3) return '```'.startsWith(rest) ? 0 : -1;
  const m = FENCE.exec(rest);
  if (!m) return -1;
  const lang = m[1]!.toLowerCase();
  if (!m[2]) {
    const open = m[0].length === rest.length && LANGS.some((l) => l.startsWith(lang));
    return open ? 0 : -1;
  }
  return LANGS.includes(lang) ? m[0].length : -1;
};

const fenced = (opener: string, context: ReadContext): Reader => {
  const lang = FENCE.exec(opener)?.[1]?.toLowerCase() ?? '';
  let certain = lang.startsWith('tool_call');
  const reader = closedBy(['```'], (body) => {
    const found = context.parseCalls(body, 'json');
    if (found && context.protocol === 'text' && found.families.every((f) => f === 'niffler'))
      certain = true;
    return found?.calls;
  });
  // Decided once the body is read: the step says whether the calls need the message to end.
  const mark = (step: Step): Step =>
    step.kind === 'calls' ? { ...step, ambiguous: !certain } : step;
  return { feed: (chunk) => mark(reader.feed(chunk)), finish: () => mark(reader.finish()) };
};

export const json: Family = {
  id: 'json',
  models: 'a JSON call in a fenced block (qwen2.5-coder and other models without a call syntax)',
  openers: [{ text: callFence, first: '`', at: 'line' }],
  ambiguous: true,
  start: fenced,
};
