import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { ready, startHost, type TestHost } from './helpers.ts';

describe('stdio server: echo fixture', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startHost([fixtureSpec('echo', { env: { FIXTURE_TOKEN: 'abc' } })]);
    await ready(t.host, 'echo');
  });
  afterAll(() => t.host.close());

  it('lists tools as server__tool with their schemas and annotations', async () => {
    const tools = await t.host.listTools();
    const say = tools.find((tool) => tool.name === 'echo__say');
    expect(say).toMatchObject({
      server: 'echo',
      tool: 'say',
      description: 'Echo text',
      annotations: { readOnlyHint: true },
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    expect(tools.every((tool) => /^[a-zA-Z0-9_-]{1,64}$/.test(tool.name))).toBe(true);
  });

  it('calls a tool', async () => {
    expect(await t.host.callTool('echo__say', { text: 'hi' })).toEqual({
      ok: true,
      output: 'hi',
      content: [{ type: 'text', text: 'hi' }],
    });
  });

  it('returns structured content; a server that breaks its own output schema fails', async () => {
    const result = await t.host.callTool('echo__add', { a: 2, b: 3 });
    expect(result).toMatchObject({ ok: true, output: '5', structured: { sum: 5 } });
    const bad = await t.host.callTool('echo__bad_structured', {});
    expect(bad).toMatchObject({ ok: false });
    expect(!bad.ok && bad.error.message).toContain('Output validation');
  });

  it('normalizes every content type', async () => {
    const result = await t.host.callTool('echo__contents', {});
    expect(result.ok).toBe(true);
    expect(result.content?.map((c) => c.type)).toEqual([
      'text',
      'image',
      'audio',
      'resource-link',
      'resource',
    ]);
    expect(result.output).toContain('[image: image/png, 9 bytes]');
    expect(result.output).toContain('[resource link: a.txt file:///tmp/a.txt]');
    expect(result.output).toContain('embedded note');
  });

  it('turns isError, thrown errors and bad arguments into readable failures', async () => {
    expect(await t.host.callTool('echo__fail', { why: 'nope' })).toMatchObject({
      ok: false,
      error: { code: 'tool-error', message: 'nope' },
    });
    const thrown = await t.host.callTool('echo__throw', {});
    expect(thrown).toMatchObject({ ok: false });
    expect(!thrown.ok && thrown.error.message).toContain('thrown inside the tool');
    const invalid = await t.host.callTool('echo__say', { text: 42 });
    expect(invalid.ok).toBe(false);
    expect(await t.host.callTool('echo__missing', {})).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    });
  });

  it('gives the child only the safe base environment plus its env', async () => {
    const result = await t.host.callTool('echo__env_keys', {});
    const keys = result.output!.split(',');
    expect(keys).toContain('FIXTURE_TOKEN');
    const allowed = new Set([
      'PATH',
      'HOME',
      'USER',
      'LANG',
      'TERM',
      'SHELL',
      'TMPDIR',
      'FIXTURE_TOKEN',
    ]);
    expect(keys.filter((k) => !allowed.has(k))).toEqual([]);
    expect(
      JSON.parse((await t.host.callTool('echo__env', { names: ['FIXTURE_TOKEN'] })).output!),
    ).toEqual({
      FIXTURE_TOKEN: 'abc',
    });
  });

  it('runs the server in the workspace root and offers it as a root', async () => {
    expect((await t.host.callTool('echo__cwd', {})).output).toBe(t.data.root);
    const roots = JSON.parse((await t.host.callTool('echo__roots', {})).output!);
    expect(roots).toEqual([{ uri: `file://${t.data.root}`, name: 'repo' }]);
  });

  it('writes stderr and server log notifications to the server log', async () => {
    await t.host.callTool('echo__log', { message: 'careful now' });
    const [status] = await t.host.status();
    const log = readFileSync(status!.logFile, 'utf8');
    expect(log).toContain('[stderr] echo fixture starting');
    expect(log).toContain('[log:warning:fixture] careful now');
  });

  it("keeps the server's credentials and token-shaped strings out of its log", async () => {
    const secret = 'hunter2-very-long-secret';
    const own = await startHost([
      fixtureSpec('echo', {
        name: 'careless',
        displayName: 'careless',
        env: { FIXTURE_SECRET: secret },
      }),
    ]);
    onTestFinished(() => own.host.close());
    await ready(own.host, 'careless');
    // Its log notifications go to the same file; the answer comes after them on the same stream.
    await own.host.callTool('careless__log', { message: `retrying with ${secret}` });
    await own.host.callTool('careless__log', { message: 'key sk-proj-abcdefghijklmnop' });
    const [status] = await own.host.status();
    const log = readFileSync(status!.logFile, 'utf8');
    expect(log).toContain('[stderr] echo fixture starting');
    expect(log).toContain('FIXTURE_SECRET=********');
    expect(log).toContain('retrying with ********');
    expect(log).toContain('key ********');
    expect(log).not.toContain(secret);
    expect(log).not.toContain('sk-proj-abcdefghijklmnop');
  });

  it('reports metrics per server and per tool', async () => {
    // Its own server, so the counts do not depend on the tests above having run first.
    const own = await startHost([fixtureSpec('echo')]);
    onTestFinished(() => own.host.close());
    await ready(own.host, 'echo');
    await own.host.callTool('echo__say', { text: 'hi' });
    await own.host.callTool('echo__say', { text: 42 });
    await own.host.callTool('echo__add', { a: 2, b: 3 });
    await own.host.callTool('echo__fail', { why: 'nope' });
    await own.host.callTool('echo__cwd', {});
    await own.host.callTool('echo__contents', {});
    const [status] = await own.host.status();
    expect(status).toMatchObject({
      name: 'echo',
      state: 'ready',
      transport: 'stdio',
      restarts: 0,
      serverInfo: { name: 'echo-fixture', version: '1.0.0' },
      instructions: 'A fixture that echoes.',
      prompts: 1,
      resources: 1,
    });
    expect(status!.pid).toBeGreaterThan(0);
    expect(status!.calls).toBeGreaterThan(5);
    expect(status!.errors).toBeGreaterThan(0);
    expect(status!.p50Ms).toBeGreaterThan(0);
    expect(status!.p95Ms).toBeGreaterThanOrEqual(status!.p50Ms!);
    expect(status!.toolMetrics['say']).toMatchObject({ calls: 2, errors: 1, timeouts: 0 });
  });

  it('lists and uses prompts and resources', async () => {
    expect(await t.host.listPrompts()).toEqual([
      {
        server: 'echo',
        name: 'greet',
        description: 'Greets',
        arguments: [{ name: 'who', required: true }],
      },
    ]);
    expect(await t.host.listResources()).toEqual([
      { server: 'echo', uri: 'mem://note', name: 'note', mimeType: 'text/plain' },
    ]);
    expect((await t.host.readResource('echo', 'mem://note')).output).toContain('a note');
    expect((await t.host.getPrompt('echo', 'greet', { who: 'Ann' })).output).toContain('Hello Ann');
  });
});
