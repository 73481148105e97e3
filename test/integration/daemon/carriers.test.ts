import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectSocket, type EngineClient } from '../../../src/main/daemon/client.ts';
import { startInProcess } from '../../../src/main/daemon/in-process.ts';
import { runDaemon } from '../../../src/main/daemon/server.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { VERSION } from '../../../src/main/version.ts';
import { publishedServersYaml } from '../../e2e/workspace.ts';
import { testEnv } from '../../fixtures/env.ts';

const makeRoot = () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-c-')));
  const root = path.join(base, 'repo');
  const home = path.join(base, 'h');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'config.yaml'), publishedServersYaml(base));
  const env = testEnv({ HOME: base, NIFFLER_HOME: home });
  return { base, root, home, env };
};

type Carrier = (
  ws: ReturnType<typeof makeRoot>,
) => Promise<{ client: EngineClient; close: () => Promise<void> }>;

const inProcess: Carrier = async ({ root, env }) => {
  const engine = await startInProcess({ root, env });
  return { client: engine.client, close: engine.close };
};

const socket: Carrier = async ({ root, env }) => {
  let listening: () => void = () => {};
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const running = runDaemon({ root, env, onListening: () => listening() });
  await ready;
  const client = await connectSocket(nifflerPaths(root, env).socket);
  return {
    client,
    close: async () => {
      await client.request('daemon/stop', {}).catch(() => undefined);
      client.close();
      await running;
    },
  };
};

describe.each([
  ['in-process MessageChannel', inProcess],
  ['daemon Unix socket', socket],
])('the engine protocol over the %s', (_name, carrier) => {
  it('says hello, reports status, lists and calls MCP tools, and returns typed errors', async () => {
    const ws = makeRoot();
    const { client, close } = await carrier(ws);
    onTestFinished(async () => {
      await close();
      rmSync(ws.base, { recursive: true, force: true });
    });
    expect(await client.hello('test')).toMatchObject({ ok: true, version: VERSION, root: ws.root });

    const status = await client.request('mcp/status', { wait: true });
    expect(status.servers.map((s) => [s.name, s.state])).toEqual([
      ['everything', 'ready'],
      ['filesystem', 'ready'],
      ['memory', 'ready'],
    ]);
    expect(status.configError).toBeNull();

    const tools = await client.request('mcp/tools', { server: 'memory' });
    expect(tools.map((t) => t.name)).toContain('memory__read_graph');

    const echo = await client.request('mcp/call', {
      server: 'everything',
      tool: 'echo',
      args: { message: 'over the wire' },
    });
    expect(echo).toMatchObject({ ok: true });
    expect(echo.ok && echo.output).toContain('over the wire');

    await expect(
      client.request('mcp/call', { server: 'nope', tool: 'x', args: {} }),
    ).rejects.toMatchObject({
      name: 'NifflerError',
      code: 'mcp-not-found',
      message: expect.stringContaining(
        'no server named "nope" (configured: everything, filesystem, memory)',
      ),
    });

    const daemon = await client.request('daemon/status', {});
    expect(daemon).toMatchObject({ root: ws.root, clients: 1, runningTurns: 0, configError: null });
  });

  it('a front-end of another version is told so', async () => {
    const ws = makeRoot();
    const { client, close } = await carrier(ws);
    onTestFinished(async () => {
      await close();
      rmSync(ws.base, { recursive: true, force: true });
    });
    const reply = await client.request('hello', {
      version: '0.0.0-other',
      pid: process.pid,
      client: 'test',
    });
    expect(reply).toMatchObject({ ok: false, reason: 'version-mismatch', version: VERSION });
  });
});
