import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrokenModern, type BrokenFixture } from '../../fixtures/mcp/broken-modern.ts';
import { fixtureSpec, remoteSpec } from '../../fixtures/mcp/servers.ts';
import { ready, startHost, text, type TestHost } from './helpers.ts';

// Servers that get 2026-07-28 wrong, beside a good one: each gets a clear error or problem in
// mcp status, the good one is unaffected, and nothing is fetched on a server's behalf.
describe('bad input from servers of the 2026-07-28 era', () => {
  let t: TestHost;
  const broken: Record<string, BrokenFixture> = {};
  let canary: http.Server;
  const fetched: string[] = [];
  beforeAll(async () => {
    canary = http.createServer((req, res) => {
      fetched.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"object"}');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    const refUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}/schema.json`;
    for (const mode of [
      'discover-garbage',
      'breaks-after-discover',
      'bad-header',
      'network-ref',
      'bad-result',
      'bad-result-2025',
    ] as const)
      broken[mode] = await startBrokenModern(mode, refUrl);
    t = await startHost(
      [
        fixtureSpec('echo'),
        ...Object.entries(broken).map(([mode, f]) => remoteSpec(mode, f.url, 'http')),
      ],
      { health: { maxFailures: 1 } },
    );
  });
  afterAll(async () => {
    await t.host.close();
    for (const f of Object.values(broken)) await f.close();
    canary.close();
  });

  const settled = (server: string) =>
    t.host.waitForStatus(server, (s) => s.state === 'ready' || s.state === 'failed');

  it('a server/discover answer that is no DiscoverResult: falls back to initialize, which it refuses; a clear error', async () => {
    const status = await settled('discover-garbage');
    expect(status.state).toBe('failed');
    expect(status.lastError?.message).toMatch(
      /^server "discover-garbage" negotiating the protocol failed: .*Method not found: initialize/,
    );
    expect(broken['discover-garbage']!.methods.slice(0, 2)).toEqual([
      'server/discover',
      'initialize',
    ]);
  });

  it('a server that claims 2026-07-28 and then breaks it: says so', async () => {
    const status = await settled('breaks-after-discover');
    expect(status.state).toBe('failed');
    expect(status.lastError?.message).toMatch(
      /^server "breaks-after-discover" advertised protocol 2026-07-28 but then failed to list its catalog: /,
    );
  });

  it('a tool with an invalid x-mcp-header annotation is left out and named; the rest work', async () => {
    const status = await ready(t.host, 'bad-header');
    expect(status.tools).toBe(1);
    expect(status.problems.map((p) => p.message)).toEqual([
      'tool "regional" left out: its x-mcp-header annotation is invalid (SEP-2243); the server must fix its input schema',
    ]);
    expect(text(await t.host.callTool('bad-header__say', { text: 'x' }))).toBe('broken: x');
    expect(await t.host.callTool('bad-header__regional', {})).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    });
  });

  it('a schema that $refs a URL: named in mcp status, never fetched; its call fails clearly', async () => {
    const status = await ready(t.host, 'network-ref');
    expect(status.problems.map((p) => p.message).join('\n')).toMatch(
      /tool "remote_schema" has a schema that refers to http:\/\/127\.0\.0\.1:\d+\/schema\.json \(\$ref\); niffler does not fetch it/,
    );
    const result = await t.host.callTool('network-ref__remote_schema', {});
    expect(result).toMatchObject({ ok: false });
    expect(text(result)).toMatch(/output schema does not compile|does not match its output schema/);
    expect(fetched).toEqual([]);
  });

  it.each(['bad-result', 'bad-result-2025'])(
    'a tools/call result that is no CallToolResult (%s): the call fails clearly, the server goes on',
    async (server) => {
      await ready(t.host, server);
      // Twice: the result's validator is made once per connection and method, and holds after.
      for (let round = 0; round < 2; round++) {
        const result = await t.host.callTool(`${server}__say`, { text: 'bad' });
        expect(result).toMatchObject({ ok: false, error: { code: 'tool-error' } });
        expect(text(result)).toMatch(/Invalid result for tools\/call: .*expected array/s);
        expect(text(await t.host.callTool(`${server}__say`, { text: 'good' }))).toBe(
          'broken: good',
        );
      }
      expect((await ready(t.host, server)).state).toBe('ready');
    },
  );

  it('the other servers are unaffected', async () => {
    await ready(t.host, 'echo');
    expect(text(await t.host.callTool('echo__say', { text: 'still here' }))).toBe('still here');
  });
});
