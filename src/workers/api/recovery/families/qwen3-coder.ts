import { closedBy, startingWith } from '../readers.ts';
import { typedValue } from '../values.ts';
import type { Family, RawCall, ReadContext } from '../types.ts';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from './hermes.ts';

// Qwen3-Coder and Qwen3.5 (and ByteDance Seed-OSS, in `<seed:tool_call>`): XML-style, every value
// written as text and typed by the tool's schema.
//   <tool_call>\n<function=read_file>\n<parameter=path>\nREADME.md\n</parameter>\n</function>\n</tool_call>
// (llama.cpp models/templates/Qwen3-Coder.jinja; Ollama model/parsers/qwen3coder.go.)

const SEED_OPEN = '<seed:tool_call>';
const SEED_CLOSE = '</seed:tool_call>';

/** The end of a parameter's value: its closing tag, or where the next tag starts without one. */
const valueEnd = (text: string, from: number): number => {
  const ends = ['</parameter>', '<parameter=', '</function>']
    .map((tag) => text.indexOf(tag, from))
    .filter((i) => i >= 0);
  return ends.length > 0 ? Math.min(...ends) : -1;
};

/** The calls of `<function=NAME>…</function>` blocks, nothing else but white space between. */
const xmlFunctions = (body: string, context: ReadContext): RawCall[] | undefined => {
  const calls: RawCall[] = [];
  let i = 0;
  for (;;) {
    while (/\s/.test(body[i] ?? '')) i++;
    if (i >= body.length) return calls.length > 0 ? calls : undefined;
    if (!body.startsWith('<function=', i)) return undefined;
    const nameEnd = body.indexOf('>', i);
    const close = body.indexOf('</function>', i);
    if (nameEnd < 0 || close < 0 || nameEnd > close) return undefined;
    const name = body.slice(i + '<function='.length, nameEnd).trim();
    const tool = context.tools.get(name);
    const args: Record<string, unknown> = {};
    let j = nameEnd + 1;
    for (;;) {
      while (/\s/.test(body[j] ?? '')) j++;
      if (j >= close) break;
      if (!body.startsWith('<parameter=', j)) return undefined;
      const keyEnd = body.indexOf('>', j);
      const end = valueEnd(body, keyEnd + 1);
      if (keyEnd < 0 || end < 0 || end > close) return undefined;
      const key = body.slice(j + '<parameter='.length, keyEnd).trim();
      args[key] = typedValue(tool, key, body.slice(keyEnd + 1, end));
      j = body.startsWith('</parameter>', end) ? end + '</parameter>'.length : end;
    }
    calls.push({ name, args });
    i = close + '</function>'.length;
  }
};

/** Whether a region starts as a `<function=` block: undefined while too short to tell. */
const startsWithFunction = (start: string): boolean | undefined =>
  start.length < '<function='.length
    ? '<function='.startsWith(start) || undefined
    : start.startsWith('<function=');

export const qwen3Coder: Family = {
  id: 'qwen3-coder',
  models: 'Qwen3-Coder, Qwen3.5, Seed-OSS',
  openers: [{ text: TOOL_CALL_OPEN }, { text: SEED_OPEN }],
  start: (opener, context) =>
    startingWith(
      startsWithFunction,
      opener === SEED_OPEN
        ? closedBy([SEED_CLOSE], (body) => xmlFunctions(body, context))
        : closedBy([TOOL_CALL_CLOSE], (body) => xmlFunctions(body, context), { unclosed: true }),
    ),
};
