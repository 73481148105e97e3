import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter, sleep } from '../../../src/workers/api/retry.ts';

const settings = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 5_000 };

describe('parseRetryAfter', () => {
  it.each([
    [{ 'retry-after': '3' }, 3000],
    [{ 'retry-after': '0' }, 0],
    [{ 'retry-after-ms': '250', 'retry-after': '3' }, 250],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }, 10_000],
    [{ 'retry-after': 'soon' }, undefined],
    [{}, undefined],
  ])('%j → %s', (headers, expected) => {
    expect(parseRetryAfter(new Headers(headers), Date.parse('2026-01-01T00:00:00Z'))).toBe(
      expected,
    );
  });
});

describe('backoffDelay', () => {
  it('doubles from the base with ±25% jitter', () => {
    expect(backoffDelay(0, settings, undefined, () => 0.5)).toBe(100);
    expect(backoffDelay(3, settings, undefined, () => 0.5)).toBe(800);
    expect(backoffDelay(3, settings, undefined, () => 0)).toBe(600);
    expect(backoffDelay(3, settings, undefined, () => 1)).toBe(1000);
  });
  it('takes Retry-After over backoff, both capped', () => {
    expect(backoffDelay(0, settings, 1234)).toBe(1234);
    expect(backoffDelay(0, settings, 60_000)).toBe(5_000);
    expect(backoffDelay(20, settings, undefined, () => 0.5)).toBe(5_000);
  });
});

describe('sleep', () => {
  it('rejects with the abort reason', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
  it('rejects at once with the reason of a signal already aborted', async () => {
    const reason = new Error('already');
    await expect(sleep(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
  it('resolves when the wait is over', async () => {
    await expect(sleep(0, new AbortController().signal)).resolves.toBeUndefined();
  });
});
