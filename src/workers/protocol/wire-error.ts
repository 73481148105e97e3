/** Error codes shared by every process and thread. The CLI maps them to exit codes in one place. */
export type ErrorCode =
  | 'config-invalid'
  | 'config-not-found'
  | 'untrusted'
  | 'usage'
  | 'llm-http'
  | 'llm-stream'
  | 'llm-unreachable'
  | 'mcp-connect'
  | 'mcp-call'
  | 'mcp-not-found'
  | 'tool-failed'
  | 'tool-denied'
  | 'daemon-unreachable'
  /** The daemon took the connection and then said nothing within the deadline (stopped, stuck). */
  | 'daemon-unresponsive'
  | 'worker-exited'
  | 'timeout'
  | 'canceled'
  | 'internal';

/** The one error shape that crosses a thread or a socket: plain, structured-clone-safe data. */
export interface WireError {
  code: ErrorCode;
  message: string;
  data?: Record<string, unknown>;
  stack?: string;
}

/**
 * niffler's one error class: a code the CLI maps to an exit code, a message that names the next
 * step. Defined beside the wire shape so that main and the workers throw the same class.
 */
export class NifflerError extends Error {
  override name = 'NifflerError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string';

/** Turns anything thrown into a `WireError`, keeping `code` and `data` when the error has them. */
export const toWire = (error: unknown, fallback: ErrorCode = 'internal'): WireError => {
  if (error instanceof Error) {
    const withCode = error as Error & { code?: unknown; data?: unknown };
    const code =
      isErrorCode(withCode.code) && withCode.name === 'NifflerError' ? withCode.code : fallback;
    const data =
      typeof withCode.data === 'object' && withCode.data !== null
        ? (withCode.data as Record<string, unknown>)
        : undefined;
    return {
      code,
      message: error.message,
      ...(data ? { data } : {}),
      ...(error.stack ? { stack: error.stack } : {}),
    };
  }
  return { code: fallback, message: String(error) };
};
