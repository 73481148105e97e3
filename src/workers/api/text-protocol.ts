import type { ToolSpec } from '../protocol/api.ts';

// The text tool protocol, for models without native tools: the system-prompt appendix that
// teaches it, and the lines earlier calls and results are sent back as. Reading the calls is the
// `niffler` family of the recovery (recovery/families/niffler.ts), with every other family's.

/** The line prefix a model writes to call a tool under the text protocol. */
export const TOOL_CALL_MARKER = 'TOOL_CALL:';
/** The line prefix of a result given back to the model. */
const TOOL_RESULT_MARKER = 'TOOL_RESULT:';

/** The `TOOL_CALL:` line for a call, as the model should have written it. */
export const formatToolCall = (call: { name: string; args: Record<string, unknown> }): string =>
  `${TOOL_CALL_MARKER} ${JSON.stringify({ name: call.name, args: call.args })}`;

/** The `TOOL_RESULT:` line given back to the model. */
export const formatToolResult = (name: string, result: unknown): string =>
  `${TOOL_RESULT_MARKER} ${JSON.stringify({ name, result })}`;

/** The system-prompt appendix that teaches a model without native tools the exact format. */
export const textProtocolAppendix = (tools: ToolSpec[]): string =>
  [
    '# Tools',
    '',
    'You can call tools. To call one, write a line on its own, exactly in this format:',
    '',
    `${TOOL_CALL_MARKER} {"name": "<tool name>", "args": {<arguments as JSON>}}`,
    '',
    '- The whole call, JSON included, is on that one line. For several calls, write several lines.',
    '- After your calls, stop writing and wait. Each result comes back in the next message as:',
    `  ${TOOL_RESULT_MARKER} {"name": "<tool name>", "result": <the output>}`,
    `- Never write ${TOOL_RESULT_MARKER} yourself. When you need no tool, answer normally.`,
    '',
    'Available tools:',
    ...tools.flatMap((tool) => [
      '',
      `## ${tool.name}`,
      tool.description,
      `Arguments (JSON schema): ${JSON.stringify(tool.inputSchema)}`,
    ]),
  ].join('\n');
