import {
  chmodSync,
  chownSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { McpServerSpec } from '../../../src/workers/protocol/mcp.ts';
import { waitUntil } from '../../../src/main/daemon/lifecycle.ts';
import { catalogRevision } from '../../../src/workers/mcp/catalog-revision.ts';
import { KeptCatalogs, type KeptCatalog } from '../../../src/workers/mcp/kept-catalog.ts';

const spec = (extra: Partial<McpServerSpec> = {}): McpServerSpec => ({
  name: 'memory',
  displayName: 'memory',
  transport: 'stdio',
  command: 'node',
  args: ['server.js'],
  env: { TOKEN: 'one' },
  timeoutMs: 1000,
  startupTimeoutMs: 1000,
  maxConcurrency: 1,
  autoStart: true,
  gate: 'startable',
  ...extra,
});

const kept: Omit<KeptCatalog, 'savedAt'> = {
  catalog: {
    tools: [{ name: 'read_graph', inputSchema: { type: 'object' } }],
    prompts: [],
    resources: [{ uri: 'mem://x', name: 'x' }],
    templates: [],
  },
  serverInfo: { name: 'memory-server', version: '1.2.3' },
  instructions: 'Remember things.',
};

/** A workspace's kept catalogs in a fresh directory, and what they logged. */
const store = (version = '0.1.0') => {
  const base = mkdtempSync(path.join(tmpdir(), 'nf-kept-'));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const dir = path.join(base, 'catalogs', 'ws');
  const lines: string[] = [];
  const make = (v = version) => new KeptCatalogs(dir, v, (_level, msg) => lines.push(msg));
  return { dir, lines, make };
};

/** The kept files in `dir` (none while it does not exist; temporary files left out). */
const files = (dir: string): string[] => {
  try {
    return readdirSync(dir).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
  } catch {
    return [];
  }
};

/** Saves `kept` for `spec()` and waits until it is on disk. */
const saved = async (s: ReturnType<typeof store>) => {
  s.make().save(spec(), kept);
  expect(await waitUntil(() => files(s.dir).length === 1, 5000)).toBe(true);
  return path.join(s.dir, files(s.dir)[0]!);
};

describe('KeptCatalogs', () => {
  it('keeps a catalog in a private file (0600 in a 0700 directory) that a later run reads back', async () => {
    const s = store();
    const file = await saved(s);
    expect(statSync(s.dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(s.make().read(spec())).toMatchObject(kept);
    // Another value of the same variable is the same definition (the digest has names only).
    expect(s.make().read(spec({ env: { TOKEN: 'two' } }))).toMatchObject(kept);
    expect(s.lines).toEqual([]);
    // The secret value is in no file.
    expect(readFileSync(file, 'utf8')).not.toContain('one');
  });

  it.each([
    ['another argument', { args: ['server.js', '--other'] }],
    ['another command', { command: 'deno' }],
    ['another variable', { env: { TOKEN: 'one', EXTRA: 'x' } }],
    ['another header', { transport: 'http' as const, url: 'https://x', headers: { A: 'b' } }],
  ])('ignores the catalog of a changed definition (%s), saying why', async (_what, change) => {
    const s = store();
    await saved(s);
    expect(s.make().read(spec(change))).toBeUndefined();
    expect(s.lines.join('\n')).toMatch(
      /kept catalog of server "memory" is ignored: (the server definition changed since it was written|it is not valid)/,
    );
  });

  it('ignores a catalog of another niffler version', async () => {
    const s = store();
    await saved(s);
    expect(s.make('0.2.0').read(spec())).toBeUndefined();
    expect(s.lines.join('\n')).toContain('it was written by niffler 0.1.0, this is 0.2.0');
  });

  it.each([
    ['cut short', (text: string) => text.slice(0, text.length / 2), 'not valid JSON'],
    ['not JSON', () => '\u0000\u0001garbage', 'not valid JSON'],
    ['not an object', () => '[1, 2]', 'not a JSON object'],
    [
      'tools without schemas',
      (text: string) => text.replace('"inputSchema":{"type":"object"}', '"x":1'),
      'its tools are not a list of named tools with input schemas',
    ],
  ])('ignores a corrupt catalog (%s), with a log line', async (_what, spoil, why) => {
    const s = store();
    const file = await saved(s);
    writeFileSync(file, spoil(readFileSync(file, 'utf8')));
    expect(s.make().read(spec())).toBeUndefined();
    expect(s.lines.join('\n')).toContain(why);
  });

  it('refuses a symlink, and a file others may write', async () => {
    const s = store();
    const file = await saved(s);
    const real = `${file}.real`;
    writeFileSync(real, readFileSync(file));
    rmSync(file);
    symlinkSync(real, file);
    expect(s.make().read(spec())).toBeUndefined();
    expect(s.lines.at(-1)).toContain('it is a symlink');
    rmSync(file);
    writeFileSync(file, readFileSync(real), { mode: 0o600 });
    chmodSync(file, 0o666);
    expect(s.make().read(spec())).toBeUndefined();
    expect(s.lines.at(-1)).toContain('others may write it');
  });

  it.skipIf(process.getuid?.() !== 0)(
    "refuses a file of another user's (run as root, which can give one away)",
    async () => {
      const s = store();
      const file = await saved(s);
      chownSync(file, 4242, 4242);
      expect(s.make().read(spec())).toBeUndefined();
      expect(s.lines.at(-1)).toContain('it belongs to uid 4242');
    },
  );

  it("ignores a catalog whose server's cache hint (ttlMs) has run out", async () => {
    const s = store();
    s.make().save(spec(), { ...kept, freshUntil: { tools: Date.now() + 60_000 } });
    expect(await waitUntil(() => files(s.dir).length === 1, 5000)).toBe(true);
    expect(s.make().read(spec())).toMatchObject(kept);
    expect(s.make().read(spec(), Date.now() + 120_000)).toBeUndefined();
    expect(s.lines.at(-1)).toContain("the server's cache hint (ttlMs) for its tools has run out");
  });

  it('removes the catalogs of servers no longer configured', async () => {
    const s = store();
    await saved(s);
    s.make().prune(['memory']);
    expect(files(s.dir)).toHaveLength(1);
    s.make().prune(['other']);
    expect(files(s.dir)).toHaveLength(0);
  });
});

describe('catalogRevision', () => {
  it('names the tools added, removed and changed (none: undefined)', () => {
    const tool = (name: string, description = '') => ({
      name,
      description,
      inputSchema: { type: 'object' as const },
    });
    const base = { prompts: [], resources: [], templates: [] };
    const before = { ...base, tools: [tool('a'), tool('b'), tool('c')] };
    expect(catalogRevision(before, before)).toBeUndefined();
    expect(
      catalogRevision(before, { ...base, tools: [tool('a'), tool('c', 'new words'), tool('d')] }),
    ).toEqual({ added: ['d'], removed: ['b'], changed: ['c'] });
  });
});
