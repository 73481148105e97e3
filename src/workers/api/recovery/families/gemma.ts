import { closedBy } from '../readers.ts';
import { pythonCalls } from '../values.ts';
import type { Family, OpenerMatch, RawCall } from '../types.ts';

// Gemma 3 (and Gemma 2 prompted as Google's docs show): the call as Python in a `tool_code`
// block, often inside `print(…)`.
//   ```tool_code\nprint(get_current_temperature(location='Paris'))\n```
// (ai.google.dev/gemma/docs/capabilities/function-calling and /gemma/docs/meme-generator; the
// gemma-3-4b-it output above is from an LM Studio server log.)

const FENCE = /^```tool_code[ \t]*(\r?\n)?/;

/** A ```tool_code line at the start of a line: its length, 0 while it may still be one. */
const toolCodeFence: OpenerMatch = (text, i) => {
  const rest = text.slice(i, i + 20);
  if ('```tool_code'.startsWith(rest)) return 0;
  const m = FENCE.exec(rest);
  if (!m) return -1;
  return m[1] ? m[0].length : rest.length === m[0].length ? 0 : -1;
};

/** The calls in a tool_code block: one per line, `print(…)` and `default_api.` taken off. */
const toolCode = (body: string): RawCall[] | undefined => {
  const lines = body.split('\n').filter((line) => line.trim());
  const calls: RawCall[] = [];
  for (const line of lines) {
    const code = line.trim().replace(/^print\(([\s\S]*)\)$/, '$1');
    const found = code.startsWith('[') ? pythonCalls(code, true) : pythonCalls(code, false);
    if (!found) return undefined;
    for (const call of found)
      if ('args' in call) calls.push({ ...call, name: call.name.replace(/^default_api\./, '') });
  }
  return calls.length > 0 ? calls : undefined;
};

export const gemma: Family = {
  id: 'gemma',
  models: 'Gemma 2, Gemma 3 (tool_code)',
  openers: [{ text: toolCodeFence, first: '`', at: 'line' }],
  start: () => closedBy(['```'], toolCode, { unclosed: true }),
};
