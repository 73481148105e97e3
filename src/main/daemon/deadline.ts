import { NifflerError } from '../errors.ts';
import type { Env } from '../paths.ts';
import { readPidFile } from '../../workers/shared/pid-file.ts';

// How long a front-end waits for a daemon that has taken its connection: for the answer to its
// hello, and while a request is in flight, for any sign of life (the daemon sends a heartbeat
// while it works on a request, so a slow model or a long tool call is not taken for a frozen
// daemon). No import beyond the error class: the one-shot commands load this.

/** The default deadline, in ms. */
export const DEFAULT_DAEMON_TIMEOUT_MS = 5_000;

/** How often a daemon working on a request says it is alive; well inside any deadline. */
export const HEARTBEAT_MS = 250;

/** The deadline in ms: `NIFFLER_DAEMON_TIMEOUT` (seconds, at least 1), else 5 s. */
export const daemonTimeoutMs = (env: Env = process.env): number => {
  const seconds = Number(env['NIFFLER_DAEMON_TIMEOUT']);
  return Number.isFinite(seconds) && seconds > 0
    ? Math.max(1_000, seconds * 1_000)
    : DEFAULT_DAEMON_TIMEOUT_MS;
};

/**
 * The error for a daemon that did not answer within `timeoutMs`: names it by the pid in its pid
 * file (the socket when there is none) and says the way out.
 */
export const notResponding = (pidFile: string, socket: string, timeoutMs: number): NifflerError => {
  const pid = readPidFile(pidFile);
  const who = pid !== null ? `daemon pid ${pid}` : `the niffler daemon on ${socket}`;
  return new NifflerError(
    'daemon-unresponsive',
    `${who} is not responding (no answer within ${timeoutMs / 1000} s); run niffler daemon restart, or niffler daemon stop --force, or run this with --no-daemon`,
    pid !== null ? { pid } : {},
  );
};

/** True for the error `notResponding` makes. */
export const isUnresponsive = (error: unknown): boolean =>
  error instanceof NifflerError && error.code === 'daemon-unresponsive';
