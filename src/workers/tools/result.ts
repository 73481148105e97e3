import type { ToolResult } from '../protocol/tool-result.ts';

/** The failure helper every tool uses, shared with the MCP worker and the main process. */
export { fail } from '../protocol/tool-result.ts';

/** A successful call. */
export const done = (
  output: string,
  extra: Omit<Extract<ToolResult, { ok: true }>, 'ok' | 'output'> = {},
): ToolResult => ({ ok: true, output, ...extra });

/** Message of anything thrown, for a `ToolResult`. */
export const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);
