import { balanced, closedBy, thenClosed } from '../readers.ts';
import { callFromObject, callsFromJson, parseJson } from '../values.ts';
import type { Family, Reader } from '../types.ts';

// Hermes 2 Pro / Hermes 3 and Qwen 2.5 / Qwen 3: one JSON object per `<tool_call>` block, several
// blocks in a message.
//   <tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>
//   <tools>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tools>   (Qwen2.5-Coder)
// (llama.cpp models/templates/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja,
// Qwen-Qwen2.5-7B-Instruct.jinja; vLLM tool_parsers/hermes_tool_parser.py, pull request 33083.)

export const TOOL_CALL_OPEN = '<tool_call>';
export const TOOL_CALL_CLOSE = '</tool_call>';
/** Qwen2.5-Coder prompted with examples writes a call, or an array of them, in `<tools>` tags. */
const TOOLS_OPEN = '<tools>';

/** The call object, then `</tool_call>`. */
const hermesCall = (): Reader =>
  thenClosed(
    balanced('{', (value) => {
      const call = callFromObject(parseJson(value));
      return call ? [call] : undefined;
    }),
    TOOL_CALL_CLOSE,
  );

export const hermes: Family = {
  id: 'hermes',
  models: 'Hermes 2/3, Qwen 2.5/3, QwQ, Qwen2.5-Coder',
  openers: [{ text: TOOL_CALL_OPEN }, { text: TOOLS_OPEN }],
  start: (opener) =>
    opener === TOOLS_OPEN
      ? closedBy(['</tools>'], callsFromJson, { unclosed: true })
      : hermesCall(),
};
