import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { remoteSpec } from '../../fixtures/mcp/servers.ts';
import {
  startHttpFixture,
  startSseFixture,
  startWsFixture,
  type RemoteFixture,
} from '../../fixtures/mcp/remote.ts';
import { ready, startHost, type TestHost } from './helpers.ts';

describe('remote transports', () => {
  let http: RemoteFixture;
  let sse: RemoteFixture;
  let ws: RemoteFixture;
  let t: TestHost;
  beforeAll(async () => {
    [http, sse, ws] = await Promise.all([startHttpFixture(), startSseFixture(), startWsFixture()]);
    t = await startHost([
      remoteSpec('web', http.url, 'http', {
        headers: { Authorization: 'Bearer s3cret', 'X-Team': 'core' },
      }),
      remoteSpec('legacy', sse.url, 'sse'),
      remoteSpec('fallback', sse.url, 'http'),
      // An http:// URL for a WebSocket server is normalized to ws://.
      remoteSpec('socket', ws.url, 'ws', { headers: { Authorization: 'Bearer ws-token' } }),
    ]);
    await Promise.all(['web', 'legacy', 'fallback', 'socket'].map((s) => ready(t.host, s)));
  });
  afterAll(async () => {
    await t.host.close();
    await Promise.all([http.close(), sse.close(), ws.close()]);
  });

  it('calls over Streamable HTTP with the configured headers', async () => {
    expect(await t.host.callTool('web__say', { text: 'hi' })).toMatchObject({
      ok: true,
      output: 'http: hi',
    });
    expect(http.requests.length).toBeGreaterThan(0);
    expect(
      http.requests.every((h) => h['authorization'] === 'Bearer s3cret' && h['x-team'] === 'core'),
    ).toBe(true);
  });

  it('calls over legacy SSE', async () => {
    expect(await t.host.callTool('legacy__say', { text: 'hi' })).toMatchObject({
      ok: true,
      output: 'sse: hi',
    });
  });

  it('falls back from Streamable HTTP to SSE for a server that only speaks SSE', async () => {
    const status = (await t.host.status()).find((s) => s.name === 'fallback');
    expect(status?.transport).toBe('sse');
    expect(await t.host.callTool('fallback__say', { text: 'hi' })).toMatchObject({
      ok: true,
      output: 'sse: hi',
    });
  });

  it('calls over WebSocket', async () => {
    expect(await t.host.callTool('socket__say', { text: 'hi' })).toMatchObject({
      ok: true,
      output: 'ws: hi',
    });
    expect(ws.requests[0]?.['sec-websocket-protocol']).toBe('mcp');
  });

  it('sends the configured headers on the WebSocket upgrade request', () => {
    expect(ws.requests[0]?.['authorization']).toBe('Bearer ws-token');
  });

  it('reconnects a dropped WebSocket with the restart backoff, headers again', async () => {
    const before = ws.requests.length;
    ws.drop!();
    await t.host.waitForStatus('socket', (s) => s.state === 'degraded');
    await t.host.waitForStatus('socket', (s) => s.state === 'ready');
    expect(ws.requests.length).toBeGreaterThan(before);
    expect(ws.requests.at(-1)?.['authorization']).toBe('Bearer ws-token');
    expect(await t.host.callTool('socket__say', { text: 'again' })).toMatchObject({
      ok: true,
      output: 'ws: again',
    });
  });
});

describe('a remote server that drops', () => {
  it('is found by the ping, marked degraded and reconnected once it is back', async () => {
    let server = await startHttpFixture();
    const port = Number(new URL(server.url).port);
    const { host } = await startHost([remoteSpec('web', server.url, 'http')], {
      health: { pingIntervalMs: 100, pingTimeoutMs: 1_000, maxFailures: 100, maxDelayMs: 200 },
    });
    onTestFinished(async () => {
      await host.close();
      await server.close();
    });
    await ready(host, 'web');
    await server.close();
    const degraded = await host.waitForStatus('web', (s) => s.state === 'degraded');
    expect(degraded.lastError?.message).toContain('server "web" stopped answering (ping failed');
    expect(await host.callTool('web__say', { text: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'server-unavailable' },
    });
    server = await startHttpFixture(port);
    const back = await host.waitForStatus('web', (s) => s.state === 'ready');
    expect(back.restarts).toBeGreaterThanOrEqual(1);
    expect(await host.callTool('web__say', { text: 'again' })).toMatchObject({
      ok: true,
      output: 'http: again',
    });
  });
});
