import { closedBy } from '../readers.ts';
import { parseJson } from '../values.ts';
import type { Family, RawCall } from '../types.ts';

// DeepSeek V3, R1 and V3.1, in their full-width markers. V3/R1 write `function`, the name and a
// fenced JSON block; V3.1 the name and the JSON alone.
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Tokyo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"city": "Tokyo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
// (vLLM tests/entrypoints/openai/tool_parsers/test_deepseekv3_tool_parser.py; Ollama
// model/parsers/deepseek3.go; llama.cpp models/templates/deepseek-ai-DeepSeek-V3.1.jinja.)

const CALLS_BEGIN = '<｜tool▁calls▁begin｜>';
const CALLS_END = '<｜tool▁calls▁end｜>';
const CALL_BEGIN = '<｜tool▁call▁begin｜>';
const CALL_END = '<｜tool▁call▁end｜>';
const SEP = '<｜tool▁sep｜>';

/** One call between its begin and end markers. */
const deepseekCall = (text: string): RawCall | undefined => {
  const sep = text.indexOf(SEP);
  if (sep < 0) return undefined;
  const head = text.slice(0, sep).trim();
  const tail = text.slice(sep + SEP.length);
  if (head === 'function') {
    const m = /^\s*([^\s`]+)\s*\n?\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(tail);
    const args = m ? parseJson(m[2]!) : undefined;
    return m && args !== undefined ? { name: m[1]!, args } : undefined;
  }
  const args = parseJson(tail.trim());
  return head && args !== undefined ? { name: head, args } : undefined;
};

/** Every `<｜tool▁call▁begin｜>…<｜tool▁call▁end｜>` in the block, nothing else between them. */
const deepseekCalls = (body: string): RawCall[] | undefined => {
  const calls: RawCall[] = [];
  let rest = body;
  for (;;) {
    rest = rest.trimStart();
    if (!rest) return calls.length > 0 ? calls : undefined;
    if (!rest.startsWith(CALL_BEGIN)) return undefined;
    const end = rest.indexOf(CALL_END);
    if (end < 0) return undefined;
    const call = deepseekCall(rest.slice(CALL_BEGIN.length, end));
    if (!call) return undefined;
    calls.push(call);
    rest = rest.slice(end + CALL_END.length);
  }
};

export const deepseek: Family = {
  id: 'deepseek',
  models: 'DeepSeek V3, R1 (and its distills), V3.1, V3.2',
  openers: [{ text: CALLS_BEGIN }],
  start: () =>
    closedBy([CALLS_END], deepseekCalls, {
      // A server that stops at the end marker: the calls that closed still count.
      unclosed: true,
    }),
};
