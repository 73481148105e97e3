import { balanced, headed, NONE } from '../readers.ts';
import { parseJson } from '../values.ts';
import type { Family, RawCall, Reader } from '../types.ts';

// MeetKai Functionary v3.2 (`>>>NAME` then its arguments; `>>>all` is the answer) and v3.1
// (`<function=NAME>` JSON `</function>`).
//   >>>read_file\n{"path": "a"}
//   <function=read_file>{"path": "a"}</function>
// (llama.cpp tests/test-chat.cpp, meetkai-functionary-medium-v3.2.jinja, -v3.1.jinja.)

const object = (name: string): Reader =>
  balanced('{', (value): RawCall[] | undefined => {
    const args = parseJson(value);
    return args === undefined ? undefined : [{ name, args }];
  });

export const functionary: Family = {
  id: 'functionary',
  models: 'Functionary v3.1, v3.2',
  openers: [{ text: '>>>', at: 'line' }, { text: '<function=' }],
  start: (opener) =>
    opener === '>>>'
      ? headed('\n', (name) => {
          if (name === 'all') return { kind: 'skip', rest: '' };
          return /^[\w.-]+$/.test(name) ? object(name) : NONE;
        })
      : headed('>', (name) => (/^[\w.-]+$/.test(name) ? object(name) : NONE), 100),
};
