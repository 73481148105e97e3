import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTool, tempRepo, textOf } from './repo.ts';

const ROUTES: Record<string, { type: string; body: string | Buffer; status?: number }> = {
  '/page': {
    type: 'text/html; charset=utf-8',
    body: '<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Title</h1><p>Some <b>bold</b> text and a <a href="/x">link</a>.</p></body></html>',
  },
  '/other': { type: 'text/html', body: '<ul><li>one</li><li>two</li></ul><script>x()</script>' },
  '/data.json': { type: 'application/json', body: '{"a":1}' },
  '/big': { type: 'text/plain', body: 'y'.repeat(3000) },
  '/image': { type: 'image/png', body: Buffer.from([0x89, 0x50]) },
  '/missing': { type: 'text/plain', body: 'no such page', status: 404 },
};

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/moved') {
      res.writeHead(302, { location: '/data.json' }).end();
      return;
    }
    const route = ROUTES[req.url ?? ''] ?? { type: 'text/plain', body: 'nope', status: 404 };
    res.writeHead(route.status ?? 200, { 'content-type': route.type }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('fetch', () => {
  it('turns HTML into markdown without scripts and styles', async () => {
    const repo = tempRepo();
    const result = await runTool(repo.context, 'fetch', { url: `${base}/page` });
    expect(textOf(result)).toBe(
      `GET ${base}/page: 200 OK, text/html; charset=utf-8\n\n# Title\n\nSome **bold** text and a [link](/x).`,
    );
  });

  it('converts each page on its own with the one converter the thread keeps', async () => {
    const repo = tempRepo();
    const page = `GET ${base}/page: 200 OK, text/html; charset=utf-8\n\n# Title\n\nSome **bold** text and a [link](/x).`;
    expect(textOf(await runTool(repo.context, 'fetch', { url: `${base}/page` }))).toBe(page);
    expect(textOf(await runTool(repo.context, 'fetch', { url: `${base}/other` }))).toBe(
      `GET ${base}/other: 200 OK, text/html\n\n*   one\n*   two`,
    );
    expect(textOf(await runTool(repo.context, 'fetch', { url: `${base}/page` }))).toBe(page);
  });

  it('follows redirects and returns JSON as text', async () => {
    const repo = tempRepo();
    expect(await runTool(repo.context, 'fetch', { url: `${base}/moved` })).toMatchObject({
      ok: true,
      output: `GET ${base}/data.json: 200 OK, application/json\n\n{"a":1}`,
      data: { status: 200 },
    });
  });

  it('caps the body in bytes, then in characters', async () => {
    const repo = tempRepo({ maxFileBytes: 1000, maxChars: 500 });
    const result = await runTool(repo.context, 'fetch', { url: `${base}/big` });
    expect(result).toMatchObject({ ok: true, savedTo: expect.any(String) });
    expect(textOf(result)).toContain('output cut: 500 of');
  });

  it('reports HTTP errors, binary bodies, bad URLs and refused connections', async () => {
    const repo = tempRepo();
    const run = (url: string) => runTool(repo.context, 'fetch', { url });
    expect(await run(`${base}/missing`)).toMatchObject({
      ok: false,
      error: { code: 'exec-failed', message: `GET ${base}/missing: 404 Not Found` },
      output: expect.stringContaining('no such page'),
    });
    expect(await run(`${base}/image`)).toMatchObject({
      error: { message: expect.stringContaining('image/png is not text') },
    });
    expect(await run('ftp://example.com/x')).toMatchObject({ error: { code: 'invalid-args' } });
    expect(await run('not a url')).toMatchObject({ error: { code: 'invalid-args' } });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await run(`http://127.0.0.1:${port}/`)).toMatchObject({
      error: { code: 'exec-failed', message: expect.stringContaining('ECONNREFUSED') },
    });
  });
});
