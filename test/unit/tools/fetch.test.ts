import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolLimits } from '../../../src/workers/protocol/tools.ts';
import { privateKind } from '../../../src/workers/tools/private-address.ts';
import { runTool, tempRepo as plainRepo, textOf } from './repo.ts';

/** A repo whose fetch may reach `allowPrivate` (default: this test's loopback server). */
const tempRepo = (limits: Partial<ToolLimits> = {}, allowPrivate = ['127.0.0.1']) => {
  const repo = plainRepo(limits);
  repo.context.fetch = { allowPrivate };
  return repo;
};

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
let port: number;
const requests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (req.url === '/moved') {
      res.writeHead(302, { location: '/data.json' }).end();
      return;
    }
    if (req.url === '/to-ip') {
      res.writeHead(302, { location: `http://127.0.0.1:${port}/data.json` }).end();
      return;
    }
    const route = ROUTES[req.url ?? ''] ?? { type: 'text/plain', body: 'nope', status: 404 };
    res.writeHead(route.status ?? 200, { 'content-type': route.type }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
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

describe('fetch and private addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd00::1', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['8.8.8.8', null],
    ['2606:4700::1111', null],
    ['172.32.0.1', null],
  ])('%s is %s', (address, kind) => expect(privateKind(address)).toBe(kind));

  it('asks before connecting to a loopback address, by address or by name', async () => {
    const repo = tempRepo({}, []);
    const before = requests.length;
    expect(await runTool(repo.context, 'fetch', { url: `${base}/data.json` })).toEqual({
      ok: false,
      error: {
        code: 'needs-approval',
        message:
          `GET ${base}/data.json was stopped before connecting: 127.0.0.1 is 127.0.0.1, a loopback ` +
          "address, which may be a service of this machine or its network. It needs the user's " +
          'approval, or tools.fetch.allowPrivate: [127.0.0.1] in the config.',
      },
      ask: { reason: 'it reaches 127.0.0.1 (127.0.0.1), a loopback address', grant: '127.0.0.1' },
    });
    // A name is checked on what DNS answers, when the socket connects.
    const byName = await runTool(repo.context, 'fetch', {
      url: `http://localhost:${port}/data.json`,
    });
    expect(byName).toMatchObject({
      ok: false,
      error: { code: 'needs-approval' },
      ask: { grant: 'localhost' },
    });
    expect(requests.length).toBe(before);
  });

  it('goes ahead when allowPrivate covers it (a name, an address, a range) or the user granted it', async () => {
    const url = `${base}/data.json`;
    for (const allow of [['127.0.0.1'], ['127.0.0.0/8']])
      expect(await runTool(tempRepo({}, allow).context, 'fetch', { url })).toMatchObject({
        ok: true,
      });
    const named = tempRepo({}, ['localhost']);
    expect(
      await runTool(named.context, 'fetch', { url: `http://localhost:${port}/data.json` }),
    ).toMatchObject({ ok: true });
    const granted = tempRepo({}, []);
    granted.context.fetch = { allowPrivate: [], granted: ['127.0.0.1'] };
    expect(await runTool(granted.context, 'fetch', { url })).toMatchObject({ ok: true });
  });

  it('checks every redirect: an allowed host cannot send it on to a private one', async () => {
    const repo = tempRepo({}, ['localhost']);
    const before = requests.length;
    const result = await runTool(repo.context, 'fetch', { url: `http://localhost:${port}/to-ip` });
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'needs-approval' },
      ask: { grant: '127.0.0.1' },
    });
    expect(requests.slice(before)).toEqual(['/to-ip']);
  });
});
