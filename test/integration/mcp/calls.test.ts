import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { ready, startHost, type TestHost } from './helpers.ts';

describe('calls: progress, timeout, concurrency, cancellation', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startHost([
      fixtureSpec('slow', { maxConcurrency: 2, timeoutMs: 1_000 }),
      fixtureSpec('slow', { name: 'slowest', displayName: 'slowest', timeoutMs: 300 }),
    ]);
    await Promise.all([ready(t.host, 'slow'), ready(t.host, 'slowest')]);
  });
  afterAll(() => t.host.close());

  it('forwards progress, and progress resets the timeout', async () => {
    const seen: unknown[] = [];
    // 8 steps of 200 ms: 1.6 s in all, over the 1 s timeout, but never 1 s without progress.
    const result = await t.host.callTool(
      'slow__slow',
      { steps: 8, ms: 200 },
      { onProgress: (p) => seen.push(p) },
    );
    expect(result).toMatchObject({ ok: true, output: 'done after 8 steps' });
    // The fixture writes the last progress and the result at once; the last progress still counts.
    expect(seen).toEqual(
      Array.from({ length: 8 }, (_, i) => ({
        progress: i + 1,
        total: 8,
        message: `step ${i + 1}`,
      })),
    );
  });

  it('times out a call with no progress and counts it', async () => {
    const result = await t.host.callTool('slowest__slow', { steps: 1, ms: 5_000 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    expect(!result.ok && result.error.message).toContain('within 0.3 s');
    const status = (await t.host.status()).find((s) => s.name === 'slowest')!;
    expect(status.timeouts).toBe(1);
    expect(status.toolMetrics['slow']).toMatchObject({ calls: 1, errors: 1, timeouts: 1 });
    expect(status.state).toBe('ready');
  });

  it('runs at most maxConcurrency calls at once, in FIFO order', async () => {
    const tags = ['a', 'b', 'c', 'd', 'e', 'f'];
    const results = await Promise.all(
      tags.map((tag) => t.host.callTool('slow__hold', { tag, releaseAt: 2 })),
    );
    expect(results.map((r) => r.output)).toEqual(tags);
    const stats = JSON.parse((await t.host.callTool('slow__stats', {})).output!);
    expect(stats).toEqual({ peak: 2, order: tags });
  });

  it('cancels a call through its signal: the server gets notifications/cancelled', async () => {
    const controller = new AbortController();
    // `wait` reports progress once it runs; abort then, so the server is inside the call.
    const pending = t.host.callTool(
      'slow__wait',
      {},
      { signal: controller.signal, onProgress: () => controller.abort() },
    );
    expect(await pending).toMatchObject({ ok: false, error: { code: 'canceled' } });
    // The server answers `cancellations` only once it has seen a cancellation.
    expect(await t.host.callTool('slow__cancellations', {})).toMatchObject({
      ok: true,
      output: '1',
    });
  });

  it('cancels a queued call without it ever reaching the server', async () => {
    const running = [new AbortController(), new AbortController()];
    let started = 0;
    let bothRunning!: () => void;
    const inFlight = new Promise<void>((resolve) => (bothRunning = resolve));
    const held = running.map((c) =>
      t.host.callTool(
        'slow__wait',
        {},
        { signal: c.signal, onProgress: () => ++started === 2 && bothRunning() },
      ),
    );
    await inFlight;
    const queuedControl = new AbortController();
    const queued = t.host.callTool(
      'slow__hold',
      { tag: 'never', releaseAt: 1 },
      { signal: queuedControl.signal },
    );
    expect((await t.host.status()).find((s) => s.name === 'slow')).toMatchObject({
      inFlight: 2,
      queued: 1,
    });
    queuedControl.abort();
    expect(await queued).toMatchObject({ ok: false, error: { code: 'canceled' } });
    for (const c of running) c.abort();
    await Promise.all(held);
    const stats = JSON.parse((await t.host.callTool('slow__stats', {})).output!);
    expect(stats.order).not.toContain('never');
  });
});
