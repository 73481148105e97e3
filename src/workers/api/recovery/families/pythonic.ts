import { balanced, marked } from '../readers.ts';
import { pythonCalls } from '../values.ts';
import type { Family, OpenerMatch } from '../types.ts';

// Python-style calls in a list: Llama 4 (also in `<|python_start|>`), LFM2 (in
// `<|tool_call_start|>`), and the models prompted as Gemma's and Llama 3.2's docs show.
//   [get_weather(city='LA', metric='C'), register_user(name='Doe', age=9)]
// A bare list counts only at the start of a line, for an offered tool, at the end of a message.
// (vLLM tests/entrypoints/openai/tool_parsers/test_llama4_pythonic_tool_parser.py; SGLang
// test/srt/test_function_call_parser.py TestPythonicDetector; llama.cpp tests/test-chat.cpp LFM2.)

const PYTHON_START = '<|python_start|>';
const LFM2_START = '<|tool_call_start|>';

/** `[` then an offered tool's name and `(`: its length, 0 while it may still be, -1 when not. */
const bracketedCall: OpenerMatch = (text, i, context) => {
  if (text[i] !== '[') return -1;
  const m = /^\[\s*([A-Za-z_][\w.-]*)?(\()?/.exec(text.slice(i, i + 80));
  const name = m?.[1] ?? '';
  const whole = m !== null && m[0].length === text.length - i;
  if (m?.[2]) return context.tools.has(name) ? 1 : -1;
  if (!whole) return -1;
  for (const tool of context.tools.keys()) if (tool.startsWith(name)) return 0;
  return -1;
};

const list = (prefix: string) =>
  balanced('[', (value) => pythonCalls(value, true), { quotes: `'"`, prefix });

export const pythonic: Family = {
  id: 'pythonic',
  models: 'Llama 4, LFM2, and models prompted with [func(arg=…)]',
  openers: [
    { text: PYTHON_START },
    { text: LFM2_START },
    { text: bracketedCall, first: '[', at: 'line' },
  ],
  ambiguous: true,
  start: (opener) => (opener === '[' ? marked(list('['), true) : marked(list(''), false)),
};
