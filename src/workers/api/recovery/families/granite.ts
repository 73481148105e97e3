import { balanced } from '../readers.ts';
import { callsFromJson } from '../values.ts';
import type { Family } from '../types.ts';
import { TOOL_CALL_OPEN } from './hermes.ts';

// IBM Granite 3.x: a JSON array of calls after `<|tool_call|>` (3.0) or `<tool_call>` (3.1+),
// with no closing tag.
//   <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
// (vLLM tests/entrypoints/openai/tool_parsers/test_granite_tool_parser.py.)

export const granite: Family = {
  id: 'granite',
  models: 'Granite 3.0–3.3',
  openers: [{ text: '<|tool_call|>' }, { text: TOOL_CALL_OPEN }],
  start: () => balanced('[', callsFromJson),
};
