import { balanced, marked } from '../readers.ts';
import { callFromObject, parseJson } from '../values.ts';
import type { Family, OpenerMatch, Reader } from '../types.ts';

// Llama 3.1–3.3 (and the many models prompted the same way): a JSON object with `name` and
// `parameters`, bare at the start of a line or after `<|python_tag|>`; several separated by `;`.
//   {"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}
//   <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}};{"name": …}
// Bare JSON is also what prose and code show, so it counts only at the end of a message.
// (vLLM tests/entrypoints/openai/tool_parsers/test_llama3_json_tool_parser.py; SGLang
// test/srt/test_function_call_parser.py TestLlama32Detector.)

const PYTHON_TAG = '<|python_tag|>';
const FIRST_KEYS = ['name', 'type', 'function', 'tool_name'];

/**
 * `{` then white space and the first key of a call object: 1 (the brace) once the key is read,
 * 0 while it could still be, -1 when it is not.
 */
const bareCallObject: OpenerMatch = (text, i) => {
  if (text[i] !== '{') return -1;
  let j = i + 1;
  while (j < text.length && /\s/.test(text[j]!)) j++;
  if (j === text.length) return 0;
  if (text[j] !== '"') return -1;
  const end = text.indexOf('"', j + 1);
  const key = end < 0 ? text.slice(j + 1) : text.slice(j + 1, end);
  if (end < 0) return FIRST_KEYS.some((k) => k.startsWith(key)) && key.length < 12 ? 0 : -1;
  return FIRST_KEYS.includes(key) ? 1 : -1;
};

/** One JSON call object (the brace the opener matched comes first). */
const callObject = (prefix: string): Reader =>
  balanced(
    '{',
    (value) => {
      const call = callFromObject(parseJson(value));
      return call ? [call] : undefined;
    },
    { prefix },
  );

export const llama3: Family = {
  id: 'llama3',
  models: 'Llama 3.1, 3.2, 3.3 (JSON tool calls)',
  openers: [{ text: PYTHON_TAG }, { text: bareCallObject, first: '{', at: 'line' }],
  ambiguous: true,
  separators: ';',
  start: (opener) =>
    opener === PYTHON_TAG ? marked(callObject(''), false) : marked(callObject('{'), true),
};
