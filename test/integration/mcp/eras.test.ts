import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startModernHttpFixture, type ModernHttpFixture } from '../../fixtures/mcp/modern-http.ts';
import { fixtureSpec, publishedSpec, remoteSpec } from '../../fixtures/mcp/servers.ts';
import { ready, startHost, text, type TestHost } from './helpers.ts';

// Servers of both protocol eras through the real worker: v2-server fixtures that speak only
// 2026-07-28 (stdio and HTTP) or only 2025-11-25 (legacy-v2), the v1 echo fixture (2025-11-25),
// and the published servers (2025-11-25). `protocol: auto` picks the revision each speaks; `mcp status` shows it.
describe('protocol negotiation, both eras', () => {
  let t: TestHost;
  let http: ModernHttpFixture;
  const protocols = path.join(mkdtempSync(path.join(tmpdir(), 'niffler-eras-')), 'protocols.json');
  beforeAll(async () => {
    http = await startModernHttpFixture();
    t = await startHost(
      [
        fixtureSpec('modern'),
        fixtureSpec('echo'),
        fixtureSpec('legacy-v2'),
        remoteSpec('web', http.url, 'http'),
        publishedSpec('memory'),
        publishedSpec('everything', ['stdio']),
        publishedSpec('filesystem', [tmpdir()]),
      ],
      { protocolsFile: protocols },
    );
    await Promise.all(
      ['modern', 'echo', 'legacy-v2', 'web', 'memory', 'everything', 'filesystem'].map((s) =>
        ready(t.host, s),
      ),
    );
  });
  afterAll(async () => {
    await t.host.close();
    await http.close();
  });

  it('each server speaks the revision it knows, and mcp status says which', async () => {
    const revision = Object.fromEntries(
      (await t.host.status()).map((s) => [s.name, s.protocolVersion]),
    );
    expect(revision).toEqual({
      modern: '2026-07-28',
      web: '2026-07-28',
      echo: '2025-11-25',
      'legacy-v2': '2025-11-25',
      memory: '2025-11-25',
      everything: '2025-11-25',
      filesystem: '2025-11-25',
    });
    expect(text(await t.host.callTool('modern__say', { text: 'hi' }))).toBe('stdio: hi');
    expect(text(await t.host.callTool('web__say', { text: 'hi' }))).toBe('http: hi');
    expect(text(await t.host.callTool('echo__say', { text: 'hi' }))).toBe('hi');
    expect(text(await t.host.callTool('legacy-v2__say', { text: 'hi' }))).toBe('legacy-v2: hi');
    // A 2025-era server asks in the middle of a call; the same handler answers as for rounds.
    t.host.setElicitationHandler(() =>
      Promise.resolve({ action: 'accept', content: { name: 'Ann' } }),
    );
    onTestFinished(() => t.host.setElicitationHandler(undefined));
    expect(text(await t.host.callTool('legacy-v2__ask_name', {}))).toBe('hello Ann');
    const legacy = (await t.host.status()).find((s) => s.name === 'legacy-v2');
    expect(legacy?.instructions).toBe('A v2 server that speaks only protocol 2025-11-25.');
    const modern = (await t.host.status()).find((s) => s.name === 'modern');
    expect(modern?.instructions).toBe('A fixture that speaks only protocol 2026-07-28.');
    expect(modern?.serverInfo).toEqual({ name: 'modern-stdio', version: '2.0.0' });
  });

  it('sends the 2026-07-28 request headers over HTTP, no initialize', async () => {
    const methods = http.requests.map((h) => h['mcp-method']);
    expect(methods).toContain('server/discover');
    expect(methods).toContain('tools/call');
    expect(methods).not.toContain('initialize');
    const call = http.requests.find((h) => h['mcp-method'] === 'tools/call');
    expect(call?.['mcp-protocol-version']).toBe('2026-07-28');
    expect(call?.['mcp-name']).toBe('say');
  });

  it('a restart takes the kept verdict: no second server/discover', async () => {
    for (const server of ['modern', 'echo', 'legacy-v2']) {
      const before = (await t.host.trace(server)).at(-1)?.seq ?? 0;
      await t.host.restartServer(server);
      await ready(t.host, server);
      const methods = (await t.host.trace(server, before))
        .filter((e) => e.kind === 'request')
        .map((e) => e.method);
      expect(methods, server).not.toContain('server/discover');
      expect(methods, server).toContain(server === 'modern' ? 'tools/list' : 'initialize');
    }
    expect((await t.host.status()).find((s) => s.name === 'modern')?.protocolVersion).toBe(
      '2026-07-28',
    );
  });
});

describe('input_required rounds reach the same handlers as server requests', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startHost([fixtureSpec('modern')]);
    await ready(t.host, 'modern');
  });
  afterAll(() => t.host.close());

  it('a list change reaches us on the subscriptions/listen stream', async () => {
    const changed = new Promise<void>((resolve) => {
      const off = t.host.on((event) => {
        if (event.type !== 'tools-changed' || !event.tools.some((tool) => tool.tool === 'extra'))
          return;
        off();
        resolve();
      });
    });
    expect(text(await t.host.callTool('modern__grow', {}))).toBe('grown');
    await changed;
    expect(text(await t.host.callTool('modern__extra', {}))).toBe('extra');
    const requests = (await t.host.trace('modern')).filter((e) => e.kind === 'request');
    expect(requests.map((e) => e.method)).toContain('subscriptions/listen');
  });

  it('elicitation: the dialog answers, the call goes on', async () => {
    const asked: string[] = [];
    t.host.setElicitationHandler(({ elicitation }) => {
      asked.push(elicitation.message);
      return Promise.resolve({ action: 'accept', content: { ok: true } });
    });
    onTestFinished(() => t.host.setElicitationHandler(undefined));
    expect(text(await t.host.callTool('modern__confirm', {}))).toBe('confirmed');
    expect(asked).toEqual(['Proceed?']);
  });

  it('elicitation without a user interface is declined with a reason', async () => {
    expect(text(await t.host.callTool('modern__confirm', {}))).toBe('not confirmed (decline)');
  });

  it('sampling goes through the sampling handler', async () => {
    t.host.setSamplingHandler(() =>
      Promise.resolve({
        ok: true,
        model: 'fake',
        role: 'assistant',
        content: { type: 'text', text: 'old pond' },
      }),
    );
    onTestFinished(() => t.host.setSamplingHandler(undefined));
    expect(text(await t.host.callTool('modern__sample', {}))).toBe('sampled: old pond');
  });

  it('roots are the workspace roots', async () => {
    const roots = JSON.parse(text(await t.host.callTool('modern__roots', {}))) as {
      uri: string;
    }[];
    expect(roots.map((r) => r.uri)).toEqual([`file://${t.data.root}`]);
  });

  it('an input_required loop that never ends stops after a bounded number of rounds', async () => {
    t.host.setElicitationHandler(() => Promise.resolve({ action: 'accept', content: {} }));
    onTestFinished(() => t.host.setElicitationHandler(undefined));
    const result = await t.host.callTool('modern__forever', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'tool-error' } });
    expect(text(result)).toContain('asked for input 8 rounds in a row without finishing');
    const status = (await t.host.status()).find((s) => s.name === 'modern');
    expect(status?.state).toBe('ready');
    expect(status?.problems.map((p) => p.message).join('\n')).toContain('asked for input 8 rounds');
  });
});

describe('cache hints of 2026-07-28', () => {
  it('a discover result with ttlMs 0 is not reused: a restart discovers again, knowing the era (no initialize)', async () => {
    const protocols = path.join(mkdtempSync(path.join(tmpdir(), 'niffler-eras-')), 'p.json');
    const t = await startHost([fixtureSpec('modern', { env: { FIXTURE_DISCOVER_TTL_MS: '0' } })], {
      protocolsFile: protocols,
    });
    onTestFinished(() => t.host.close());
    await ready(t.host, 'modern');
    const before = (await t.host.trace('modern')).at(-1)?.seq ?? 0;
    await t.host.restartServer('modern');
    expect((await ready(t.host, 'modern')).protocolVersion).toBe('2026-07-28');
    const methods = (await t.host.trace('modern', before))
      .filter((e) => e.kind === 'request')
      .map((e) => e.method);
    expect(methods).toContain('server/discover');
    expect(methods).not.toContain('initialize');
  });

  it('a tools list is not asked again while its ttlMs lasts, and is once it has run out', async () => {
    const t = await startHost([fixtureSpec('modern', { env: { FIXTURE_TTL_MS: '400' } })]);
    onTestFinished(() => t.host.close());
    await ready(t.host, 'modern');
    const lists = async () =>
      (await t.host.trace('modern')).filter(
        (e) => e.kind === 'request' && e.method === 'tools/list',
      ).length;
    const start = Date.now();
    for (let i = 0; i < 5; i++) await t.host.listTools();
    // Within the hint (the calls above took far less than 400 ms), the one listing of the start.
    if (Date.now() - start < 300) expect(await lists()).toBe(1);
    // Once it has run out, a use of the list lists it again (bounded: the hint is 400 ms).
    const deadline = Date.now() + 10_000;
    while ((await lists()) < 2 && Date.now() < deadline) {
      await t.host.listTools();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await lists()).toBe(2);
  });
});

describe('without a daemon (no probe)', () => {
  it('a 2026-only server of unknown era says how to reach it; a pin reaches it', async () => {
    const t = await startHost(
      [
        fixtureSpec('modern'),
        fixtureSpec('modern', { name: 'pinned', displayName: 'pinned', protocol: '2026-07-28' }),
      ],
      { probe: false, health: { maxFailures: 1 } },
    );
    onTestFinished(() => t.host.close());
    const modern = await t.host.waitForStatus('modern', (s) => s.state === 'failed');
    expect(modern.lastError?.message).toContain(
      'set protocol: 2026-07-28, or start it once through the daemon (niffler mcp start modern) to find out',
    );
    expect((await ready(t.host, 'pinned')).protocolVersion).toBe('2026-07-28');
  });
});

describe('pinned revisions', () => {
  it('a 2025-only server pinned to 2026-07-28, and a 2026-only one pinned to legacy, fail clearly; the others go on', async () => {
    const t = await startHost(
      [
        fixtureSpec('echo', { protocol: '2026-07-28' }),
        fixtureSpec('modern', { protocol: 'legacy' }),
        fixtureSpec('modern', { name: 'fine', displayName: 'fine' }),
      ],
      { health: { maxFailures: 1 } },
    );
    onTestFinished(() => t.host.close());
    const failed = (s: { state: string }) => s.state === 'failed';
    const echo = await t.host.waitForStatus('echo', failed);
    expect(echo.lastError?.message).toMatch(
      /^server "echo" does not speak protocol 2026-07-28 \(pinned by protocol: 2026-07-28\)/,
    );
    expect(echo.lastError?.message).toContain('set protocol: auto');
    const modern = await t.host.waitForStatus('modern', failed);
    expect(modern.lastError?.message).toMatch(
      /^server "modern" does not speak the 2025 protocol \(it speaks 2026-07-28\): .*; remove protocol: legacy to let niffler negotiate/,
    );
    expect((await ready(t.host, 'fine')).protocolVersion).toBe('2026-07-28');
  });
});
