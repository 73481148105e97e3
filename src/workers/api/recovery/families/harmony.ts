import { balanced, headed } from '../readers.ts';
import { parseJson } from '../values.ts';
import type { Family } from '../types.ts';

// gpt-oss's harmony format, when a server passes it through as text. A message header names the
// channel and, for a call, its recipient; the analysis channel is reasoning, final and commentary
// are the answer, and a message to `functions.NAME` is a call whose body is its JSON arguments.
//   <|channel|>analysis<|message|>User asks…<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>
// (Ollama harmony/harmonyparser_test.go; llama.cpp tests/test-chat.cpp, openai-gpt-oss-120b.jinja.)

const MESSAGE = '<|message|>';
/** Where an analysis message ends (harmony's end tokens). */
const HARMONY_END = ['<|end|>', '<|return|>', '<|call|>'] as const;

export const harmony: Family = {
  id: 'harmony',
  models: 'gpt-oss (harmony)',
  // A bare ` to=functions.NAME` header starts a message whose `<|start|>assistant` the server ate.
  openers: [{ text: '<|start|>' }, { text: '<|channel|>' }, { text: 'to=functions.', at: 'line' }],
  start: (opener) =>
    headed(MESSAGE, (header) => {
      const text = opener + header;
      const recipient = /to=functions\.([\w.-]+)/.exec(text)?.[1];
      const channel = /<\|channel\|>\s*(\w+)/.exec(text)?.[1];
      if (recipient)
        return balanced('{', (value) => {
          const args = parseJson(value);
          return args === undefined ? undefined : [{ name: recipient, args }];
        });
      if (channel === 'analysis') return { kind: 'reasoning', close: HARMONY_END, rest: '' };
      // `<|start|>assistant<|message|>`, final or commentary: the header goes, the answer stays.
      return { kind: 'skip', rest: '' };
    }),
};
