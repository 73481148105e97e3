import { balanced, closedBy, headed, NONE } from '../readers.ts';
import { callsFromJson } from '../values.ts';
import type { Family } from '../types.ts';

// Cohere Command R7B: a JSON array in an action block (its plan in `<|START_THINKING|>` is
// reasoning, read by the driver); Command R / R+: `Action:` and a fenced JSON array.
//   <|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "read_file", "parameters": {"path": "a"}}\n]<|END_ACTION|>
//   Action:\n```json\n[{"tool_name": "read_file", "parameters": {"path": "a"}}]\n```
// (llama.cpp tests/test-chat.cpp, CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja,
// CohereForAI-c4ai-command-r-plus-tool_use.jinja; Ollama model/parsers/cohere.go.)

const ACTION_OPEN = '<|START_ACTION|>';
const ACTION_CLOSE = '<|END_ACTION|>';

export const commandR: Family = {
  id: 'command-r',
  models: 'Command R, R+, R7B',
  openers: [{ text: ACTION_OPEN }, { text: 'Action:', at: 'line' }],
  start: (opener) =>
    opener === ACTION_OPEN
      ? closedBy([ACTION_CLOSE], callsFromJson, { unclosed: true })
      : headed('```', (before) =>
          before.trim()
            ? NONE
            : headed('\n', (lang) => (/^\s*(json)?\s*$/.test(lang) ? fenced() : NONE)),
        ),
};

/** The array in the fence, then its closing fence. */
const fenced = () => balanced('[', callsFromJson);
