import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectSocket } from '../../../src/main/daemon/client.ts';
import { startInProcess } from '../../../src/main/daemon/in-process.ts';
import { runDaemon } from '../../../src/main/daemon/server.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import type { EngineNotifications } from '../../../src/main/protocol.ts';
import { serverBin } from '../../e2e/workspace.ts';
import { testEnv } from '../../fixtures/env.ts';

const workspace = () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-l-')));
  const root = path.join(base, 'repo');
  const home = path.join(base, 'h');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  mkdirSync(home, { recursive: true });
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const env = testEnv({ HOME: base, NIFFLER_HOME: home });
  const writeConfig = (text: string) => writeFileSync(path.join(home, 'config.yaml'), text);
  return { base, root, home, env, writeConfig };
};

const memory = (file: string) =>
  `    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-memory'))}]\n    env: { MEMORY_FILE_PATH: ${JSON.stringify(file)} }\n`;

describe('daemon lifecycle', () => {
  it('exits by itself after daemon.idleMinutes with no client', async () => {
    const ws = workspace();
    ws.writeConfig('daemon:\n  idleMinutes: 0.002\n');
    let listening: () => void = () => {};
    const ready = new Promise<void>((resolve) => (listening = resolve));
    const running = runDaemon({ root: ws.root, env: ws.env, onListening: () => listening() });
    await ready;
    const client = await connectSocket(nifflerPaths(ws.root, ws.env).socket);
    expect((await client.request('daemon/status', {})).clients).toBe(1);
    client.close();
    await running; // resolves only when the daemon has stopped
    await expect(connectSocket(nifflerPaths(ws.root, ws.env).socket)).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('applies a config edit: only the changed server restarts; a broken edit keeps the last good config', async () => {
    const ws = workspace();
    const a = path.join(ws.base, 'a.jsonl');
    const b = path.join(ws.base, 'b.jsonl');
    ws.writeConfig(`mcpServers:\n  keep:\n${memory(a)}  change:\n${memory(b)}`);
    const { client, close } = await startInProcess({ root: ws.root, env: ws.env });
    onTestFinished(close);
    const before = Object.fromEntries(
      (await client.request('mcp/status', { wait: true })).servers.map((s) => [s.name, s.pid]),
    );

    const changed = new Promise<EngineNotifications['config/changed']>((resolve) =>
      client.onNotification('config/changed', resolve),
    );
    ws.writeConfig(
      `mcpServers:\n  keep:\n${memory(a)}  change:\n${memory(path.join(ws.base, 'c.jsonl'))}`,
    );
    expect(await changed).toMatchObject({ ok: true });
    const after = Object.fromEntries(
      (await client.request('mcp/status', { wait: true })).servers.map((s) => [s.name, s.pid]),
    );
    expect(after['keep']).toBe(before['keep']);
    expect(after['change']).not.toBe(before['change']);

    const broken = new Promise<EngineNotifications['config/changed']>((resolve) =>
      client.onNotification('config/changed', resolve),
    );
    ws.writeConfig('mcpServers:\n  keep: [\n');
    expect(await broken).toMatchObject({
      ok: false,
      error: expect.stringMatching(/config\.yaml:\d+/),
    });
    const status = await client.request('mcp/status', {});
    expect(status.configError).toMatch(/config\.yaml:\d+/);
    expect(status.servers.map((s) => [s.name, s.state, s.pid])).toEqual([
      ['keep', 'ready', after['keep']],
      ['change', 'ready', after['change']],
    ]);
  });
});
