import type { ToolErrorCode, ToolResult } from '../protocol/tool-result.ts';

/** A failed call the model can read; `output` carries what was produced before it failed. */
export const fail = (code: ToolErrorCode, message: string, output?: string): ToolResult =>
  output === undefined
    ? { ok: false, error: { code, message } }
    : { ok: false, error: { code, message }, output };

/** A successful call. */
export const done = (
  output: string,
  extra: Omit<Extract<ToolResult, { ok: true }>, 'ok' | 'output'> = {},
): ToolResult => ({ ok: true, output, ...extra });

/** Message of anything thrown, for a `ToolResult`. */
export const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);
