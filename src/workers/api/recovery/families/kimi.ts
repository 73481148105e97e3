import { balanced, closedBy, headed, NONE } from '../readers.ts';
import { parseJson } from '../values.ts';
import type { Family, RawCall } from '../types.ts';

// Kimi K2: calls in a section, each named `functions.NAME:INDEX`.
//   <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>
// Calls without the section markers count too, as llama.cpp reads them.
// (SGLang test/srt/test_function_call_parser.py TestKimiK2Detector; llama.cpp
// models/templates/Kimi-K2-Thinking.jinja.)

const SECTION_BEGIN = '<|tool_calls_section_begin|>';
const SECTION_END = '<|tool_calls_section_end|>';
const CALL_BEGIN = '<|tool_call_begin|>';
const CALL_END = '<|tool_call_end|>';
const ARGS_BEGIN = '<|tool_call_argument_begin|>';

/** `functions.get_weather:0` → `get_weather`. */
const nameOf = (id: string): string | undefined =>
  /^\s*(?:functions\.)?([^\s:<>]+)(?::\d+)?\s*$/.exec(id)?.[1];

const kimiCalls = (body: string): RawCall[] | undefined => {
  const parts = body.split(CALL_BEGIN);
  if (parts.shift()?.trim()) return undefined;
  const calls: RawCall[] = [];
  for (const part of parts) {
    const [id, rest] = part.split(ARGS_BEGIN);
    const name = id === undefined ? undefined : nameOf(id);
    const json = rest?.replace(CALL_END, '').trim();
    const args = json === undefined ? undefined : parseJson(json);
    if (!name || args === undefined) return undefined;
    calls.push({ name, args });
  }
  return calls.length > 0 ? calls : undefined;
};

export const kimi: Family = {
  id: 'kimi',
  models: 'Kimi K2 (Instruct, Thinking)',
  openers: [{ text: SECTION_BEGIN }, { text: CALL_BEGIN }],
  start: (opener) =>
    opener === SECTION_BEGIN
      ? closedBy([SECTION_END], kimiCalls, { unclosed: true })
      : headed(ARGS_BEGIN, (id) => {
          const name = nameOf(id);
          if (!name) return NONE;
          return balanced('{', (value) => {
            const args = parseJson(value);
            return args === undefined ? undefined : [{ name, args }];
          });
        }),
};
