import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { McpHost } from '../../../src/main/threads/mcp.ts';
import { probeBwrap } from '../../../src/workers/shared/sandbox-command.ts';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { ready, startHost } from './helpers.ts';

const probe = await probeBwrap();
const inBwrap = `a stdio server in bubblewrap${probe.ok ? '' : ` — skipped: ${probe.reason}`}`;

const tempDirs = () => {
  const base = mkdtempSync(path.join(tmpdir(), 'niffler-mcp-sandbox-'));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const dirs = { writable: '', hidden: '', outside: '' };
  for (const name of Object.keys(dirs) as (keyof typeof dirs)[]) {
    dirs[name] = path.join(base, name);
    mkdirSync(dirs[name]);
  }
  return dirs;
};

const call = async (host: McpHost, tool: string, args: Record<string, unknown> = {}) => {
  const result = await host.callTool(`probe__${tool}`, args);
  return result.ok ? result.output : `error: ${result.error.message}`;
};

describe.skipIf(!probe.ok)(inBwrap, () => {
  it('writes only where allowed, sees no hidden path, reaches no network; status says so', async () => {
    const dirs = tempDirs();
    writeFileSync(path.join(dirs.hidden, 'marker.txt'), 'HIDDEN-MARKER');
    const listener = createServer((socket) => socket.end());
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    onTestFinished(() => void listener.close());
    const port = (listener.address() as { port: number }).port;
    // Where the checkout lives under the host's /tmp (a CI clone there), the fixture's own files
    // (node, tsx, the SDK) stay readable by the mechanism the next test checks.
    const sandbox = { write: [dirs.writable], hide: [dirs.hidden], network: false };
    const { host, data } = await startHost([fixtureSpec('probe', { sandbox })]);
    onTestFinished(() => host.close());
    await ready(host, 'probe');
    expect(await call(host, 'write', { path: path.join(dirs.writable, 'a.txt') })).toBe('written');
    // A sibling under the host's /tmp is not even there; the workspace is, read-only.
    expect(await call(host, 'write', { path: path.join(dirs.outside, 'b.txt') })).toMatch(
      /failed: ENOENT/,
    );
    expect(await call(host, 'write', { path: path.join(data.root, 'c.txt') })).toMatch(
      /failed: EROFS/,
    );
    expect(existsSync(path.join(data.root, 'c.txt'))).toBe(false);
    expect(existsSync(path.join(dirs.outside, 'b.txt'))).toBe(false);
    expect(await call(host, 'read', { path: path.join(dirs.hidden, 'marker.txt') })).toMatch(
      /failed: ENOENT/,
    );
    expect(await call(host, 'connect', { port })).toMatch(
      /failed: connect (ECONNREFUSED|ENETUNREACH)/,
    );
    const [status] = await host.status();
    expect(status).toMatchObject({ name: 'probe', state: 'ready', sandbox: 'bwrap' });
  });

  it('keeps its own files readable where they live under /tmp, and nothing else of /tmp', async () => {
    // A server checked out under /tmp (its project: a package.json beside it), which speaks just
    // enough JSON-RPC by hand to answer one tool: whether a path is there to read.
    const base = mkdtempSync(path.join('/tmp', 'niffler-own-'));
    onTestFinished(() => rmSync(base, { recursive: true, force: true }));
    const project = path.join(base, 'server');
    mkdirSync(path.join(project, 'lib'), { recursive: true });
    writeFileSync(path.join(project, 'package.json'), '{"name":"own","type":"module"}');
    writeFileSync(
      path.join(project, 'lib', 'answer.mjs'),
      'export const answer = "own file read";',
    );
    writeFileSync(path.join(base, 'outside.txt'), 'OUTSIDE');
    writeFileSync(
      path.join(project, 'server.mjs'),
      `import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { answer } from './lib/answer.mjs';
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return;
  if (method === 'initialize')
    return send({ id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'own', version: '1' } } });
  if (method === 'tools/list')
    return send({ id, result: { tools: [{ name: 'seen', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }] } });
  if (method === 'tools/call')
    return send({ id, result: { content: [{ type: 'text', text: answer + '; ' + params.arguments.path + ': ' + existsSync(params.arguments.path) }] } });
  send({ id, error: { code: -32601, message: 'no ' + method } });
});
`,
    );
    const spec = {
      ...fixtureSpec('probe'),
      name: 'own',
      displayName: 'own',
      command: process.execPath,
      args: [path.join(project, 'server.mjs')],
      protocol: 'legacy' as const,
      sandbox: { write: [], hide: [], network: false },
    };
    const { host } = await startHost([spec]);
    onTestFinished(() => host.close());
    await ready(host, 'own');
    const seen = async (file: string) => {
      const result = await host.callTool('own__seen', { path: file });
      return result.ok ? result.output : `error: ${result.error.message}`;
    };
    expect(await seen(path.join(project, 'package.json'))).toBe(
      `own file read; ${path.join(project, 'package.json')}: true`,
    );
    expect(await seen(path.join(base, 'outside.txt'))).toBe(
      `own file read; ${path.join(base, 'outside.txt')}: false`,
    );
  });
});

describe('a stdio server under resource limits', () => {
  it('gets a minimal environment: no provider key it was not given', async () => {
    process.env['OPENAI_API_KEY'] = 'sk-test-mcp-env-0123456789';
    onTestFinished(() => void delete process.env['OPENAI_API_KEY']);
    const { host } = await startHost([fixtureSpec('probe', { env: { GIVEN: '1' } })]);
    onTestFinished(() => host.close());
    await ready(host, 'probe');
    const keys = (await call(host, 'env')).split(' ');
    expect(keys).toContain('GIVEN');
    expect(keys).not.toContain('OPENAI_API_KEY');
  });

  it("redacts a failed call's words: its own env values and token-shaped strings", async () => {
    const { host } = await startHost([
      fixtureSpec('probe', { env: { PROBE_TOKEN: 'tok-4711-secret' } }),
    ]);
    onTestFinished(() => host.close());
    await ready(host, 'probe');
    const result = await host.callTool('probe__fail', {});
    expect(result).toMatchObject({
      ok: false,
      error: { message: 'upstream refused token ******** (bearer ********)' },
    });
    expect(JSON.stringify(result)).not.toMatch(/tok-4711-secret|sk-live/);
  });

  it('is reported as ended by its memory limit, and restarted by the usual policy', async () => {
    const limits = { memoryMB: 400 };
    const { host } = await startHost([fixtureSpec('probe', { limits })]);
    onTestFinished(() => host.close());
    await ready(host, 'probe');
    expect(await call(host, 'grow')).toMatch(/^error: /);
    const restarted = await host.waitForStatus(
      'probe',
      (s) => s.restarts >= 1 && s.state === 'ready',
    );
    expect(restarted).toMatchObject({ state: 'ready' });
    expect((await host.status())[0]).toMatchObject({
      limits,
      lastError: {
        message: 'server "probe" went over its memory limit (limits.memoryMB: 400) and ended',
      },
    });
  });
});
