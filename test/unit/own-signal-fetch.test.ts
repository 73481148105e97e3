import { getEventListeners, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithOwnSignal } from '../../src/workers/shared/own-signal-fetch.ts';

/** Requests whose answer the server holds open (`/hold`, `/stream`), to end them by hand. */
const held = new Set<http.ServerResponse>();
/** Resolves when the server sees the request of `/stream` or `/hold` go away. */
let requestGone: Promise<void> = Promise.resolve();

const server = http.createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/redirect') return void res.writeHead(302, { location: '/target' }).end();
  if (path === '/target')
    return void res.writeHead(201, 'Made', { 'x-kind': 'target' }).end('made it');
  if (path === '/empty') return void res.writeHead(204).end();
  if (path === '/hold' || path === '/stream') {
    held.add(res);
    requestGone = once(res, 'close').then(() => {});
    if (path === '/stream') res.writeHead(200, { 'content-type': 'text/event-stream' }).write('a');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});
let base = '';
beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const ownFetch = fetchWithOwnSignal();
const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('fetchWithOwnSignal', () => {
  it('leaves no listener on a long-lived signal handed to request after request', async () => {
    const lifetime = new AbortController().signal;
    for (let i = 0; i < 200; i++) {
      const response = await ownFetch(`${base}/json`, { method: 'POST', signal: lifetime });
      expect(await response.json()).toEqual({ ok: true });
      expect(listeners(lifetime)).toBe(0);
    }
  });

  it("cancels a request waiting for its answer when the caller's signal aborts", async () => {
    const caller = new AbortController();
    const arrived = once(server, 'request');
    const pending = ownFetch(`${base}/hold`, { signal: caller.signal });
    await arrived;
    caller.abort(new Error('closing'));
    await expect(pending).rejects.toThrow('closing');
    await requestGone;
    expect(listeners(caller.signal)).toBe(0);
  });

  it("cancels a body being streamed when the caller's signal aborts, and lets it go", async () => {
    const caller = new AbortController();
    const response = await ownFetch(`${base}/stream`, { signal: caller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('a');
    expect(listeners(caller.signal)).toBe(1);
    caller.abort(new Error('closing'));
    await expect(reader.read()).rejects.toThrow('closing');
    await requestGone;
    expect(listeners(caller.signal)).toBe(0);
  });

  it('lets the signal go when the reader cancels the body', async () => {
    const caller = new AbortController();
    const response = await ownFetch(`${base}/stream`, { signal: caller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(listeners(caller.signal)).toBe(0);
    await requestGone;
  });

  it("keeps the answer's status, status text, headers, url and redirection", async () => {
    const caller = new AbortController();
    const response = await ownFetch(`${base}/redirect`, { signal: caller.signal });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.headers.get('x-kind')).toBe('target');
    expect(response.url).toBe(`${base}/target`);
    expect(response.redirected).toBe(true);
    expect(response.type).toBe('basic');
    expect(await response.text()).toBe('made it');
    expect(listeners(caller.signal)).toBe(0);
  });

  it('hands a redirect asked to be left to the caller on as it came', async () => {
    const caller = new AbortController();
    const response = await ownFetch(`${base}/redirect`, {
      signal: caller.signal,
      redirect: 'manual',
    });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/target');
    await response.text();
    expect(listeners(caller.signal)).toBe(0);
  });

  it('lets the signal go at once for an answer without a body and for a refused connection', async () => {
    const caller = new AbortController();
    const empty = await ownFetch(`${base}/empty`, { signal: caller.signal });
    expect(empty.status).toBe(204);
    expect(listeners(caller.signal)).toBe(0);
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    await expect(ownFetch(`http://127.0.0.1:${port}/`, { signal: caller.signal })).rejects.toThrow(
      'fetch failed',
    );
    expect(listeners(caller.signal)).toBe(0);
  });

  it('fails a request whose signal aborted already, and passes one without a signal through', async () => {
    const gone = new AbortController();
    gone.abort(new Error('gone before'));
    await expect(ownFetch(`${base}/json`, { signal: gone.signal })).rejects.toThrow('gone before');
    expect(await (await ownFetch(`${base}/json`)).json()).toEqual({ ok: true });
  });
});
