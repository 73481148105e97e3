import { closedBy } from '../readers.ts';
import { typedValue } from '../values.ts';
import type { Family, RawCall, ReadContext } from '../types.ts';

// MiniMax M2: `<invoke>` blocks in `<minimax:tool_call>`, values as text typed by the schema.
//   <minimax:tool_call>\n<invoke name="read_file">\n<parameter name="path">README.md</parameter>\n</invoke>\n</minimax:tool_call>
// (llama.cpp models/templates/unsloth-MiniMax-M2.jinja, tests/test-chat.cpp; vLLM
// tool_parsers/minimax_m2_tool_parser.py.)

const OPEN = '<minimax:tool_call>';
const CLOSE = '</minimax:tool_call>';
const INVOKE = /^\s*<invoke name="([^"]+)">([\s\S]*?)<\/invoke>/;
const PARAMETER = /^\s*<parameter name="([^"]+)">([\s\S]*?)<\/parameter>/;

const minimaxCalls = (body: string, context: ReadContext): RawCall[] | undefined => {
  const calls: RawCall[] = [];
  let rest = body;
  for (let invoke = INVOKE.exec(rest); invoke; invoke = INVOKE.exec(rest)) {
    const name = invoke[1]!;
    const tool = context.tools.get(name);
    const args: Record<string, unknown> = {};
    let params = invoke[2]!;
    for (let p = PARAMETER.exec(params); p; p = PARAMETER.exec(params)) {
      args[p[1]!] = typedValue(tool, p[1]!, p[2]!);
      params = params.slice(p[0].length);
    }
    if (params.trim()) return undefined;
    calls.push({ name, args });
    rest = rest.slice(invoke[0].length);
  }
  return calls.length > 0 && !rest.trim() ? calls : undefined;
};

export const minimax: Family = {
  id: 'minimax',
  models: 'MiniMax M2',
  openers: [{ text: OPEN }],
  start: (_opener, context) => closedBy([CLOSE], (body) => minimaxCalls(body, context)),
};
