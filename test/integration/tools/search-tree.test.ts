import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ToolsSchema } from '../../../src/main/config/schema.ts';
import { ToolsHost } from '../../../src/main/threads/tools.ts';
import type { ToolContext } from '../../../src/workers/protocol/tools.ts';
import { makeSearchTree, type SearchTree } from '../../fixtures/search-tree.ts';
import { runTool, textOf } from '../../unit/tools/repo.ts';

// grep and glob on a generated tree of babel's shape (30,000 tracked files and more: ignored
// dependencies, build output, hidden files, untracked files) against ripgrep on the same tree:
// the same files, nothing left out silently, an answer that says when and where it stopped short.
// Both ways a search runs: in one thread (the tool alone), and through the host, its chunks on
// the pool's threads.

const rgPath = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
})();
// Not skipped without it: these are the tests that the answers are complete.
if (!rgPath)
  throw new Error(
    'ripgrep (rg) is needed to compare file sets: apt install ripgrep (.ci/run does)',
  );

type Result = Awaited<ReturnType<typeof runTool>>;

let base: string;
let tree: SearchTree;
let host: ToolsHost;
const saved: Record<string, string | undefined> = {};

const rg = (args: string[], cwd = tree.root): string[] =>
  execFileSync(rgPath, args, {
    cwd,
    env: tree.env,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    // Not a pipe: rg would search its stdin instead of the directory.
    stdio: ['ignore', 'pipe', 'pipe'],
  })
    .split('\n')
    .filter(Boolean)
    .sort();

/** rg's exit 1 (nothing found) as an empty list. */
const rgMaybe = (args: string[]): string[] => {
  try {
    return rg(args);
  } catch (error) {
    if ((error as { status?: number }).status === 1) return [];
    throw error;
  }
};

const context = (limits: Partial<ToolContext['limits']> = {}): ToolContext => ({
  root: tree.root,
  allowedPaths: [],
  excluded: [path.join(base, 'niffler-home')],
  outputsDir: path.join(base, 'niffler-home', 'outputs'),
  todoFile: path.join(base, 'niffler-home', 'todo.json'),
  limits: {
    maxChars: 100_000_000,
    maxFileBytes: 10 * 1024 * 1024,
    bashTimeout: 120,
    bashMaxTimeout: 600,
    searchSeconds: 120,
    ...limits,
  },
  bash: { sandbox: 'off', network: false, limits: {}, passEnv: [], hide: [] },
  fetch: { allowPrivate: [] },
});

const lines = (result: Result): string[] => textOf(result).split('\n').filter(Boolean);

/** The two ways a search runs: the tool alone in this thread, and the host's pool. */
const ways = {
  alone: (tool: string, args: unknown, limits?: Partial<ToolContext['limits']>) =>
    runTool(context(limits), tool, args),
  pool: (tool: string, args: unknown) =>
    host.run({ name: tool, args }, new AbortController().signal),
};

// Each test searches the whole tree, some several times (the pages): on a busy machine that
// takes longer than the default bound.
vi.setConfig({ testTimeout: 120_000 });

describe('grep and glob on a 30,000-file tree, against ripgrep', () => {
  beforeAll(() => {
    base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'niffler-search-tree-')));
    tree = makeSearchTree(base, { files: 30_000, scale: 0.05 });
    // git and our reading of core.excludesFile see the tree's HOME, as ripgrep does.
    for (const key of ['HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_NOSYSTEM'] as const) {
      saved[key] = process.env[key];
      process.env[key] = tree.env[key];
    }
    host = new ToolsHost({
      root: tree.root,
      tools: ToolsSchema.parse({ output: { maxChars: 100_000_000 } }),
      env: { ...tree.env, NIFFLER_HOME: path.join(base, 'niffler-home') },
      maxThreads: 3,
    });
  }, 300_000);

  afterAll(async () => {
    await host?.close();
    for (const [key, value] of Object.entries(saved))
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    if (base) rmSync(base, { recursive: true, force: true });
  }, 120_000);

  it('has the shape the comparison needs: ≥ 30,000 entries, every kind of ignore rule at work', () => {
    expect(tree.written).toBeGreaterThanOrEqual(30_000);
    const files = rg(['--files']);
    expect(files.length).toBeGreaterThan(25_000);
    // What the rules leave out is there on disk, and rg leaves it out.
    for (const left of [
      'node_modules/dep-0/lib/m0.js', // .gitignore
      'packages/babel-runtime/test/index.js', // kept: a sanity check of the list
    ])
      expect(lstatSync(path.join(tree.root, left)).isFile()).toBe(true);
    expect(files).not.toContain('node_modules/dep-0/lib/m0.js');
    expect(files).toContain('scripts/keep.tmp'); // !keep.tmp after *.tmp
    expect(files).not.toContain('scripts/scratch.tmp');
    expect(files.some((f) => f.startsWith('packages/babel-runtime/lib/'))).toBe(true); // negated dir
    expect(files.some((f) => f.endsWith('.orig'))).toBe(false); // core.excludesFile
    expect(files.some((f) => f.includes('__snapshots__'))).toBe(false); // .ignore
    expect(files.some((f) => f.includes('/.'))).toBe(false); // hidden
    expect(files).not.toContain('packages/tracked-1/lib/forced.js'); // tracked, yet ignored
    expect(files.some((f) => f.startsWith('packages/wip/'))).toBe(true); // untracked
  });

  for (const [way, run] of Object.entries(ways)) {
    describe(way === 'alone' ? 'the tool alone, in one thread' : "through the host's pool", () => {
      it('glob **/* lists exactly the files rg --files lists, newest first', async () => {
        const result = await run('glob', { pattern: '**/*' });
        expect(result).toMatchObject({ ok: true, structured: { complete: true } });
        const listed = lines(result);
        expect([...listed].sort()).toEqual(rg(['--files']));
        const times = listed.slice(0, 200).map((f) => lstatSync(path.join(tree.root, f)).mtimeMs);
        expect(times).toEqual([...times].sort((a, b) => b - a));
      });

      it('glob **/*.ts under a path lists what rg lists there', async () => {
        const result = await run('glob', { pattern: '**/*.ts', path: 'packages' });
        const expected = rg(['--files', 'packages']).filter((f) => f.endsWith('.ts'));
        expect([...lines(result)].sort()).toEqual(expected);
      });

      it('grep files_with_matches: the files rg -l finds, a literal and a regex', async () => {
        for (const pattern of [tree.rare, tree.regex]) {
          const result = await run('grep', { pattern, output_mode: 'files_with_matches' });
          const found = lines(result).filter((line) => !line.startsWith('('));
          expect(found.sort()).toEqual(rgMaybe(['-l', pattern]));
          expect(found.length).toBeGreaterThan(50);
        }
      });

      it('grep count: every file and count rg -c gives, for a word on most lines', async () => {
        const result = await run('grep', { pattern: tree.common, output_mode: 'count' });
        const counts = lines(result)
          .filter((line) => !line.startsWith('('))
          .map((line) => line.replace(/: (\d+)$/, ':$1'));
        expect(counts.sort()).toEqual(rg(['-c', tree.common]));
      });

      it('grep content: the lines rg -n finds, with their numbers', async () => {
        const result = await run('grep', { pattern: tree.rare, '-i': true });
        const found = lines(result)
          .filter((line) => !line.startsWith('('))
          .map((line) => /^(.*?:\d+):/.exec(line)![1]);
        const expected = rg(['-n', '-i', tree.rare]).map((line) => /^(.*?:\d+):/.exec(line)![1]);
        expect(found.sort()).toEqual(expected);
      });
    });
  }

  it('grep -C 2: matched lines and the context rg -C 2 shows around them', async () => {
    const [file] = rg(['-l', tree.regex]);
    const result = await ways.alone('grep', { pattern: tree.regex, path: file, '-C': 2 });
    // "12:" a match, "13-" context, "--" a gap: ours is "path:12: text", rg's (one file) "12:text".
    const ours = lines(result).map((line) =>
      line === '--' ? line : /^.*?([:-])(\d+)\1 /.exec(line)!.slice(1).reverse().join(''),
    );
    const theirs = execFileSync(rgPath, ['-n', '-C', '2', tree.regex, file!], {
      cwd: tree.root,
      env: tree.env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .split('\n')
      .filter(Boolean)
      .map((line) => (line === '--' ? line : /^(\d+[:-])/.exec(line)![1]));
    expect(ours).toEqual(theirs);
    expect(ours.some((line) => line.endsWith('-'))).toBe(true);
  });

  it('pages with head_limit and offset: the pages together are the whole answer, once each', async () => {
    const all = rg(['-l', tree.rare]);
    const pages: string[] = [];
    for (let offset = 0; offset < all.length; offset += 40) {
      const page = await ways.alone('grep', {
        pattern: tree.rare,
        output_mode: 'files_with_matches',
        head_limit: 40,
        offset,
      });
      const found = lines(page).filter((line) => !line.startsWith('('));
      pages.push(...found);
      if (offset + 40 < all.length)
        expect(page).toMatchObject({ structured: { next: { offset: offset + 40 } } });
      else expect(page).not.toHaveProperty('structured.next');
    }
    expect(pages.length).toBe(all.length);
    expect([...pages].sort()).toEqual(all);
    const past = { pattern: tree.rare, output_mode: 'files_with_matches', offset: all.length };
    expect(textOf(await ways.alone('grep', past))).toMatch(
      new RegExp(`^No entries past offset ${all.length} \\(${all.length} in all\\)\\.`),
    );
  });

  it('marks an answer cut by the output budget, first line and structure, and continues from its offset', async () => {
    const maxChars = 3000;
    const first = await ways.alone('grep', { pattern: tree.common }, { maxChars });
    const text = textOf(first);
    expect(text.split('\n')[0]).toMatch(
      /^\[incomplete: the output budget \(3,000 characters, tools\.output\.maxChars\) is full after [\d,]+ (of [\d,]+ files|files \(the listing had not finished\)); continue with offset: \d+\]$/,
    );
    expect(text.length).toBeLessThan(maxChars + 400);
    const offset = (first as { structured: { incomplete: { offset: number } } }).structured
      .incomplete.offset;
    expect(first).toMatchObject({
      ok: true,
      structured: { complete: false, incomplete: { reason: 'output', offset } },
    });
    const entries = (t: string) => t.split('\n').filter((l) => l && !/^[[(]/.test(l));
    const shown = entries(text);
    expect(shown.length).toBe(offset);
    const next = await ways.alone('grep', { pattern: tree.common, offset }, { maxChars });
    const continued = entries(textOf(next));
    // The next page starts where the first stopped: the two together are the first lines of all.
    const whole = await ways.alone('grep', { pattern: tree.common, head_limit: offset + 5 });
    expect([...shown, ...continued.slice(0, 5)]).toEqual(lines(whole).slice(0, offset + 5));
  });

  it('marks an answer cut by the time budget, says how far it got and where to go on', async () => {
    const result = await ways.alone('grep', { pattern: tree.common }, { searchSeconds: 0.05 });
    const text = textOf(result);
    expect(text.split('\n')[0]).toMatch(
      /^\[incomplete: the time budget \(0\.05 s, tools\.searchLimits\.timeout\) ran out after [\d,]+ (of [\d,]+ files|files \(the listing had not finished\)); not searched yet: "[^.][^"]*"(, "[^"]+")*( and \d+ more)?; continue with path: "[^"]+"\]$/,
    );
    expect(result).toMatchObject({
      structured: { complete: false, incomplete: { reason: 'time', paths: expect.any(Array) } },
    });
    const { paths } = (result as { structured: { incomplete: { paths: string[] } } }).structured
      .incomplete;
    // The path proposed is one the search had not finished: continuing there finds more.
    const more = await ways.alone('grep', { pattern: tree.common, path: paths[0] });
    expect(more).toMatchObject({ ok: true, structured: { complete: true } });
  });

  it('says so, without error, when a glob or a pattern matches nothing', async () => {
    expect(textOf(await ways.pool('glob', { pattern: '**/*.nothing' }))).toBe(
      'No files match "**/*.nothing" in the workspace.',
    );
    expect(textOf(await ways.pool('grep', { pattern: 'no-such-word-anywhere' }))).toMatch(
      /^No lines match \/no-such-word-anywhere\/ in the workspace\./,
    );
  });
});
