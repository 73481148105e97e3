import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { ready, startHost, text } from './helpers.ts';

// Tool results kept by `mcpServers.X.cache`: only for tools annotated read-only and idempotent,
// keyed by arguments, forgotten when the workspace changes or the server restarts.
describe('the result cache', () => {
  it('serves a read-only, idempotent tool from the cache until the workspace changes', async () => {
    const t = await startHost([
      fixtureSpec('modern', { cache: { ttlSeconds: 600 } }),
      fixtureSpec('echo', { cache: { ttlSeconds: 600 } }),
    ]);
    onTestFinished(() => t.host.close());
    await Promise.all([ready(t.host, 'modern'), ready(t.host, 'echo')]);

    const first = text(await t.host.callTool('modern__count', {}));
    expect(text(await t.host.callTool('modern__count', {}))).toBe(first);
    expect(text(await t.host.callTool('modern__say', { text: 'a' }))).toBe('stdio: a');
    expect(text(await t.host.callTool('modern__say', { text: 'b' }))).toBe('stdio: b');
    const status = (await t.host.status()).find((s) => s.name === 'modern');
    expect(status?.cache).toEqual({ hits: 1, misses: 3, entries: 3 });
    // The server saw one call of count: the second was answered from the cache.
    expect(status?.toolMetrics['count']?.calls).toBe(1);

    // echo's `say` is read-only but not annotated idempotent: never cached.
    await t.host.callTool('echo__say', { text: 'x' });
    await t.host.callTool('echo__say', { text: 'x' });
    expect((await t.host.status()).find((s) => s.name === 'echo')?.cache.entries).toBe(0);

    writeFileSync(path.join(t.data.root, 'changed.txt'), 'a change');
    // The status the worker sends when it forgets (an earlier one had no hits yet).
    await t.host.waitForStatus('modern', (s) => s.cache.entries === 0 && s.cache.hits > 0);
    expect(Number(text(await t.host.callTool('modern__count', {})))).toBe(Number(first) + 1);
  });

  it('is forgotten when the server restarts', async () => {
    const t = await startHost([
      fixtureSpec('modern', { cache: { tools: { count: { ttlSeconds: 600 } } } }),
    ]);
    onTestFinished(() => t.host.close());
    await ready(t.host, 'modern');
    await t.host.callTool('modern__count', {});
    await t.host.callTool('modern__say', { text: 'not cached: no ttl for say' });
    expect((await t.host.status())[0]?.cache.entries).toBe(1);
    await t.host.restartServer('modern');
    expect((await ready(t.host, 'modern')).cache.entries).toBe(0);
  });
});
