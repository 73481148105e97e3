import type { LspTiming } from '../protocol/lsp.ts';

/** A server's timing when `lsp.timing` says nothing. */
export const DEFAULT_TIMING: Required<LspTiming> = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  maxFailures: 5,
  failureWindowMs: 5 * 60_000,
  startupTimeoutMs: 60_000,
  hungAfterMs: 20_000,
  killGraceMs: 2_000,
  floodBytes: 64 * 1024 * 1024,
};

/** `undefined` after `ms`, unless `promise` settles first. */
export const within = <T>(promise: Promise<T>, ms: number): Promise<T | undefined> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, ms));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};
