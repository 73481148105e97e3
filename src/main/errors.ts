import { NifflerError, type WireError } from '../workers/protocol/wire-error.ts';

export type { WireError } from '../workers/protocol/wire-error.ts';
export { NifflerError, toWire } from '../workers/protocol/wire-error.ts';

/** Rebuilds a `NifflerError` from the plain data that crossed a thread or socket. */
export const fromWire = (wire: WireError): NifflerError => {
  const error = new NifflerError(wire.code, wire.message, wire.data ?? {});
  if (wire.stack) error.stack = wire.stack;
  return error;
};

/** A mistake in how a command was called (exit code 2). */
export const usageError = (message: string): NifflerError => new NifflerError('usage', message);

/** The exit codes of the CLI, in one place (README says the same under "Every command has --help"). */
export const EXIT = { ok: 0, failed: 1, usage: 2, maxSteps: 3, cancelled: 130 } as const;

/** The exit code of a command that failed with `error`. */
export const exitCodeFor = (error: unknown): number => {
  if (!(error instanceof NifflerError)) return EXIT.failed;
  switch (error.code) {
    case 'usage':
      return EXIT.usage;
    case 'canceled':
      return EXIT.cancelled;
    default:
      return EXIT.failed;
  }
};
