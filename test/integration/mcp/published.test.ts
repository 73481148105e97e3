import { mkdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishedSpec } from '../../fixtures/mcp/servers.ts';
import { waitForLines } from '../../unit/tools/repo.ts';
import { ready, startHost, type TestHost } from './helpers.ts';

describe('published servers', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startHost([]);
    await t.host.updateServers([
      publishedSpec('everything'),
      publishedSpec('memory', [], { env: { MEMORY_FILE_PATH: path.join(t.dir, 'memory.jsonl') } }),
      // No directory arguments: the server takes its directories from our roots.
      publishedSpec('filesystem'),
    ]);
    await Promise.all(['everything', 'memory', 'filesystem'].map((s) => ready(t.host, s)));
  });
  afterAll(() => t.host.close());

  it('server-everything: echo, structured content and the full catalog', async () => {
    expect(await t.host.callTool('everything__echo', { message: 'hi' })).toMatchObject({
      ok: true,
      output: 'Echo: hi',
    });
    const [status] = (await t.host.status()).filter((s) => s.name === 'everything');
    expect(status?.tools).toBeGreaterThan(5);
    expect(status?.prompts).toBeGreaterThan(0);
    expect(status?.resources).toBeGreaterThan(0);
  });

  it('server-memory: writes and reads its graph', async () => {
    const created = await t.host.callTool('memory__create_entities', {
      entities: [
        { name: 'niffler', entityType: 'project', observations: ['keeps MCP servers warm'] },
      ],
    });
    expect(created.ok).toBe(true);
    const graph = await t.host.callTool('memory__read_graph', {});
    expect(graph.output).toContain('keeps MCP servers warm');
  });

  it('server-filesystem: uses our roots, and follows roots/list_changed', async () => {
    const [status] = (await t.host.status()).filter((s) => s.name === 'filesystem');
    // The server logs each time it takes its directories from our roots.
    const updated = (count: number) =>
      waitForLines(status!.logFile, count, /Updated allowed directories from MCP roots/);
    const allowed = async () =>
      (await t.host.callTool('filesystem__list_allowed_directories', {})).output;
    await updated(1);
    expect(await allowed()).toContain(realpathSync(t.data.root));
    const extra = path.join(t.dir, 'extra');
    mkdirSync(extra);
    expect(await t.host.setRoots([t.data.root, extra])).toEqual({
      notified: ['everything', 'memory', 'filesystem'],
    });
    await updated(2);
    expect(await allowed()).toContain(realpathSync(extra));
  });
});
