import { setTimeout as delay } from 'node:timers/promises';
import type { RetrySettings } from '../protocol/api.ts';

type HeaderSource = { get(name: string): string | null } | undefined;

/**
 * Milliseconds a server asked us to wait: `retry-after-ms`, else `Retry-After` in seconds or as an
 * HTTP date. Undefined when absent or unreadable.
 */
export const parseRetryAfter = (headers: HeaderSource, now = Date.now()): number | undefined => {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
};

/**
 * The wait before retry number `attempt + 1`: the server's `Retry-After` when given, else
 * exponential backoff with jitter; never more than `maxDelayMs`.
 */
export const backoffDelay = (
  attempt: number,
  settings: RetrySettings,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number => {
  const backoff = settings.baseDelayMs * 2 ** attempt * (0.75 + random() / 2);
  return Math.round(Math.min(settings.maxDelayMs, Math.max(0, retryAfterMs ?? backoff)));
};

/**
 * Waits `ms`, rejecting with the signal's reason when it aborts first (node's own timer rejects
 * with an `AbortError` that only carries the reason as its `cause`).
 */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  delay(ms, undefined, { signal }).catch((error: unknown) => {
    throw signal.aborted ? (signal.reason as Error) : error;
  });
