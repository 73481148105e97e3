import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitUntil } from '../../src/main/daemon/lifecycle.ts';
import { createLogger } from '../../src/main/log.ts';
import type { McpServerSpec } from '../../src/workers/protocol/mcp.ts';
import { KeptCatalogs } from '../../src/workers/mcp/kept-catalog.ts';
import { writeAtomicSync } from '../../src/workers/shared/atomic.ts';
import { appendLinesSync } from '../../src/workers/shared/whole-write.ts';
import { fillDisk, mountTmpfs } from '../fixtures/tmpfs.ts';

const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-logdisk-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

// Writers on a disk that fills up midway (a small tmpfs; root only, skipped otherwise): a write
// then takes part of what it is given, returns short, and only the next one fails with ENOSPC.
describe('writes on a disk that fills up (a small tmpfs; root only)', () => {
  const smallDisk = (ctx: { skip: () => void }) => {
    const dir = path.join(tempDir(), 'disk');
    if (!mountTmpfs(dir, 'size=64k')) return void ctx.skip();
    return dir;
  };

  it('the daemon log says the disk is full, leaves no half line behind, and goes on once there is room', (ctx) => {
    const dir = smallDisk(ctx);
    if (!dir) return;
    const file = path.join(dir, 'logs', 'daemon.log');
    const log = createLogger({ file });
    log.info('before', { n: 0 });
    // The file is open now; the disk fills up behind its back. What is left of the file's last
    // page takes a few lines whole, then part of one: that part must not stay.
    const filler = fillDisk(dir, 0);
    for (let n = 1; n <= 50; n++) log.info('while full', { n, pad: 'x'.repeat(200) });
    expect(log.problem()).toBe(`could not write the log ${file}: the disk is full (ENOSPC)`);
    rmSync(filler);
    log.info('after', { n: 51 });
    expect(log.problem()).toBeUndefined();
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    // Every line in the file is a whole JSON line: a write cut short by the full disk left none.
    const parsed = lines.map((line) => JSON.parse(line) as { msg: string });
    expect(parsed[0]!.msg).toBe('before');
    expect(parsed.at(-1)!.msg).toBe('after');
  });

  it('the atomic writer fails with ENOSPC and leaves the old file whole, and no temporary file', (ctx) => {
    const dir = smallDisk(ctx);
    if (!dir) return;
    const file = path.join(dir, 'config.yaml');
    writeFileSync(file, 'model: old\n');
    const filler = fillDisk(dir, 6000);
    expect(() => writeAtomicSync(file, `model: new\n# ${'x'.repeat(20_000)}\n`)).toThrow(
      expect.objectContaining({ code: 'ENOSPC' }),
    );
    expect(readFileSync(file, 'utf8')).toBe('model: old\n');
    expect(readdirSync(dir).sort()).toEqual(['config.yaml', 'filler']);
    rmSync(filler);
  });

  it('a JSON-lines append is whole or not there at all', (ctx) => {
    const dir = smallDisk(ctx);
    if (!dir) return;
    const file = path.join(dir, 'runs.jsonl');
    appendLinesSync(file, `${JSON.stringify({ n: 0 })}\n`);
    const filler = fillDisk(dir, 0);
    let failed = 0;
    for (let n = 1; n <= 40; n++) {
      try {
        appendLinesSync(file, `${JSON.stringify({ n, pad: 'y'.repeat(300) })}\n`);
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
        failed++;
      }
    }
    expect(failed).toBeGreaterThan(0);
    rmSync(filler);
    appendLinesSync(file, `${JSON.stringify({ n: 41 })}\n`);
    const ns = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { n: number }).n);
    expect(ns[0]).toBe(0);
    expect(ns.at(-1)).toBe(41);
    expect(ns).toHaveLength(40 - failed + 2);
  });
  it("a server's kept catalog: the old file stays whole, one log line, no temporary file, kept again once there is room", async (ctx) => {
    const dir = smallDisk(ctx);
    if (!dir) return;
    const catalogs = path.join(dir, 'catalogs');
    const spec: McpServerSpec = {
      name: 'memory',
      displayName: 'memory',
      transport: 'stdio',
      command: 'node',
      args: ['server.js'],
      timeoutMs: 1000,
      startupTimeoutMs: 1000,
      maxConcurrency: 1,
      autoStart: true,
      gate: 'startable',
    };
    const catalog = (n: number, pad = '') => ({
      catalog: {
        tools: [{ name: `tool_${n}`, description: pad, inputSchema: { type: 'object' as const } }],
        prompts: [],
        resources: [],
        templates: [],
      },
      serverInfo: { name: 'memory-server', version: `1.0.${n}` },
      instructions: null,
    });
    const keptFiles = () => {
      try {
        return readdirSync(catalogs);
      } catch {
        return []; // Not made yet: the first save makes it.
      }
    };
    const lines: string[] = [];
    const kept = new KeptCatalogs(catalogs, '0.1.0', (_level, msg) => lines.push(msg));
    kept.save(spec, catalog(1));
    expect(await waitUntil(() => keptFiles().length === 1, 10_000)).toBe(true);
    const [name] = readdirSync(catalogs);
    const before = readFileSync(path.join(catalogs, name!), 'utf8');
    const filler = fillDisk(dir, 0);
    kept.save(spec, catalog(2, 'x'.repeat(20_000)));
    kept.save(spec, catalog(3, 'y'.repeat(20_000)));
    expect(await waitUntil(() => lines.length > 0, 10_000)).toBe(true);
    // Both saves ran and failed (the second after the first): one line says so.
    expect(await waitUntil(() => keptFiles().length === 1, 10_000)).toBe(true);
    expect(lines).toEqual(['a server catalog could not be kept']);
    expect(readFileSync(path.join(catalogs, name!), 'utf8')).toBe(before);
    expect(new KeptCatalogs(catalogs, '0.1.0', () => {}).read(spec)?.serverInfo?.version).toBe(
      '1.0.1',
    );
    rmSync(filler);
    kept.save(spec, catalog(4));
    expect(
      await waitUntil(
        () =>
          new KeptCatalogs(catalogs, '0.1.0', () => {}).read(spec)?.serverInfo?.version === '1.0.4',
        10_000,
      ),
    ).toBe(true);
    expect(readdirSync(catalogs)).toEqual([name]);
  });
});
