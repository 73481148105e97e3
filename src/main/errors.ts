import { NifflerError, type WireError } from '../workers/protocol/wire-error.ts';

export type { ErrorCode, WireError } from '../workers/protocol/wire-error.ts';
export { NifflerError, toWire } from '../workers/protocol/wire-error.ts';

/** Rebuilds a `NifflerError` from the plain data that crossed a thread or socket. */
export const fromWire = (wire: WireError): NifflerError => {
  const error = new NifflerError(wire.code, wire.message, wire.data ?? {});
  if (wire.stack) error.stack = wire.stack;
  return error;
};

/** A mistake in how a command was called (exit code 2). */
export const usageError = (message: string): NifflerError => new NifflerError('usage', message);

/** Exit codes of the CLI: 0 ok, 1 failed, 2 usage, 3 max steps, 130 cancelled. */
export const exitCodeFor = (error: unknown): number => {
  if (!(error instanceof NifflerError)) return 1;
  switch (error.code) {
    case 'usage':
      return 2;
    case 'canceled':
      return 130;
    default:
      return 1;
  }
};
