/**
 * Calls `listener` once when `signal` aborts — at once if it already has: an abort that came
 * before a listener was added fires no event for it, and work started then would never hear that
 * it was cancelled (a gateway call whose consumer had already gone ran on, holding its server's
 * slot). Every abort listener in niffler is added through here (lint forbids the bare call).
 * Returns what removes it.
 */
export const whenAborted = (
  signal: AbortSignal | undefined,
  listener: () => void,
): (() => void) => {
  if (!signal) return () => {};
  if (signal.aborted) {
    listener();
    return () => {};
  }
  // eslint-disable-next-line no-restricted-syntax -- the one place that may
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
};
