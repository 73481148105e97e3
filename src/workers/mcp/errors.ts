import type { ToolErrorCode } from '../protocol/tool-result.ts';
import type { ErrorCode } from '../protocol/wire-error.ts';

/**
 * An error of the worker that crosses to main with its code (`toWire` keeps `code` and `data` of
 * errors named `NifflerError`; main rebuilds the real class with `fromWire`).
 */
export class WorkerError extends Error {
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

/** A tool call that failed in a way the model should read: becomes `{ ok: false, error }`. */
export class CallFailure extends Error {
  override name = 'CallFailure';
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The caller aborted. */
export class NifflerAbort extends Error {
  override name = 'AbortError';
  constructor(message = 'the call was canceled') {
    super(message);
  }
}
