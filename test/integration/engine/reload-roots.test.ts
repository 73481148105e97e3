import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineNotifications } from '../../../src/main/protocol.ts';
import { waitForLines } from '../../unit/tools/repo.ts';
import { startHarness } from './harness.ts';
import { serverBin } from '../../fixtures/mcp/servers.ts';

const filesystem = serverBin('server-filesystem');

describe('config reload', () => {
  it('offers servers the new roots when tools.allowedPaths changes', async () => {
    // server-filesystem started without directories takes its allowed directories from our roots.
    const h = await startHarness('in-process', {
      mcp: `  filesystem:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(filesystem)}]\n`,
    });
    const [status] = (await h.client.request('mcp/status', { wait: true })).servers;
    const updated = (count: number) =>
      waitForLines(status!.logFile, count, /Updated allowed directories from MCP roots/);
    await updated(1);

    const extra = path.join(path.dirname(h.root), 'extra');
    mkdirSync(extra);
    const file = path.join(h.home, 'config.yaml');
    const reloaded = new Promise<EngineNotifications['config/changed']>((resolve) =>
      h.client.onNotification('config/changed', resolve),
    );
    writeFileSync(
      file,
      `${readFileSync(file, 'utf8')}tools:\n  allowedPaths: [${JSON.stringify(extra)}]\n`,
    );
    expect(await reloaded).toMatchObject({ ok: true });
    await updated(2);
    const listed = await h.client.request('mcp/call', {
      server: 'filesystem',
      tool: 'list_allowed_directories',
      args: {},
    });
    expect(listed.output).toContain(realpathSync(extra));
  });
});
