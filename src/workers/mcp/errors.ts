import type { ToolErrorCode } from '../protocol/tool-result.ts';

/**
 * An error of the worker that crosses to main with its code (`toWire` keeps `code` and `data`;
 * main rebuilds it with `fromWire`): the one `NifflerError` class.
 */
export { NifflerError as WorkerError } from '../protocol/wire-error.ts';

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
