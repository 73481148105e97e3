import { balanced } from '../readers.ts';
import { callsFromJson } from '../values.ts';
import type { Family } from '../types.ts';

// Phi-4-mini (and FireFunction v2): `functools` and a JSON array of calls.
//   functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
// (vLLM tests/entrypoints/openai/tool_parsers/test_phi4mini_tool_parser.py; llama.cpp
// tests/test-chat.cpp, llama-cpp-microsoft-Phi-4-mini-instruct.jinja.)

export const phi4: Family = {
  id: 'phi4',
  models: 'Phi-4-mini, FireFunction v2',
  openers: [{ text: 'functools[' }],
  start: () => balanced('[', callsFromJson, { prefix: '[' }),
};
