/** One piece of tool output, as MCP defines content (text, image, audio, resources). */
export type ToolContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource-link'; uri: string; name?: string; mimeType?: string; description?: string }
  | { type: 'resource'; uri: string; mimeType?: string; text?: string; blob?: string };

/** Codes of expected tool failures: data the model reads, never a thrown error. */
type ToolErrorCode =
  | 'invalid-args'
  | 'not-found'
  | 'outside-workspace'
  | 'denied'
  | 'timeout'
  | 'canceled'
  | 'too-large'
  | 'conflict'
  | 'exec-failed'
  | 'tool-error'
  | 'server-unavailable'
  | 'server-crashed'
  | 'needs-approval'
  | 'internal';

/**
 * What every tool call returns — built-in or MCP. `output` is the text the model is given; the
 * rest is for the UI and for models that can consume it (images).
 */
export type ToolResult =
  | {
      ok: true;
      output: string;
      content?: ToolContent[];
      structured?: unknown;
      /** Where the full output was saved when `output` was cut to the cap. */
      savedTo?: string;
      data?: Record<string, unknown>;
    }
  | {
      ok: false;
      error: { code: ToolErrorCode; message: string };
      output?: string;
      content?: ToolContent[];
      /**
       * With `needs-approval`: what to ask the user, and what to grant the call when it is run
       * again (a host fetch may reach though it is private).
       */
      ask?: { reason: string; grant: string };
    };

/** A failed call the model can read; `output` carries what was produced before it failed. */
export const fail = (
  code: ToolErrorCode,
  message: string,
  output?: string,
): Extract<ToolResult, { ok: false }> =>
  output === undefined
    ? { ok: false, error: { code, message } }
    : { ok: false, error: { code, message }, output };

/** A result as the model reads it: the output, or the error (and any output) in words. */
export const resultText = (result: ToolResult): string =>
  result.ok
    ? result.output
    : `Error (${result.error.code}): ${result.error.message}${result.output ? `\n${result.output}` : ''}`;
