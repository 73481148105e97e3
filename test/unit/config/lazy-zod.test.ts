import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configBuildOptions } from '../../../scripts/build-options.mjs';
import { loadConfig, type LoadResult } from '../../../src/main/extensions/workspace-config.ts';
import { trustRepository } from '../../../src/main/trust/decide.ts';
import type * as Probe from '../../fixtures/config/lazy-probe.ts';
import { makeWorkspace } from './helpers.ts';

// The config commands run from dist/config.cjs, whose modules get lazy-zod.ts for `zod`: schemas
// recorded, built on first need, and parses answered from a memo of what zod accepted. What a
// config loads to, and every error it gets, must be what the loader with zod itself gives. The
// loader is bundled here exactly as that file is (scripts/build-options.mjs), twice (two runs:
// the first parses with zod, the second, sharing its memo, must not need zod at all), and
// compared with the loader from source on good and bad configs.

const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-lazy-zod-'));
let first: typeof Probe;
let copies = 0;

/** Another instance of the bundled loader: a run of its own, zod not loaded yet. */
const freshProbe = (): typeof Probe => {
  const file = path.join(dir, `run-${++copies}.cjs`);
  copyFileSync(path.join(dir, 'probe.cjs'), file);
  return createRequire(import.meta.url)(file) as typeof Probe;
};

beforeAll(async () => {
  await build({
    ...configBuildOptions(dir, { probe: 'test/fixtures/config/lazy-probe.ts' }),
    sourcemap: false,
    logLevel: 'silent',
  });
  first = createRequire(import.meta.url)(path.join(dir, 'probe.cjs')) as typeof Probe;
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a load came to, as plain data (origins as entries), or its error's words. */
const outcome = (result: LoadResult): unknown =>
  result.ok
    ? JSON.parse(
        JSON.stringify(
          { ...result.value, origins: [...result.value.origins] },
          (_key, value: unknown) => (value instanceof Set ? [...value] : value),
        ),
      )
    : { error: result.error.code, message: result.error.message };

const example = readFileSync('.niffler.example/config.yaml', 'utf8');

const CASES: { name: string; global?: string; repo?: string; files?: Record<string, string> }[] = [
  { name: 'the example config', global: example },
  { name: 'no config at all' },
  {
    name: 'a trusted repository over a global config',
    global:
      'model: fast\nmodels:\n  fast: { provider: openai, model: m, baseUrl: http://127.0.0.1:1/v1 }\n',
    repo: 'mcpServers:\n  memory: { command: node, args: [m.js], env: { A: b } }\ntools:\n  policy: { "memory__*": allow }\n',
  },
  {
    name: 'agents, commands and tasks',
    files: {
      '.niffler/agents/reviewer.md':
        '---\ndescription: reviews\ntools: [read_file]\n---\nReview it.\n',
      '.niffler/tasks/nightly.yaml':
        'description: every night\nprompt: check\nschedule: "0 3 * * *"\n',
      '.niffler/commands/ship.md': '---\ndescription: ship it\n---\nShip $ARGUMENTS\n',
    },
  },
  { name: 'an unknown key', global: 'mcpServers:\n  x: { comand: node }\n' },
  { name: 'a value of the wrong type', global: 'daemon: { idleMinutes: soon }\n' },
  { name: 'a server with neither command nor url', global: 'mcpServers:\n  x: { args: [a] }\n' },
  { name: 'a server with both', global: 'mcpServers:\n  x: { command: a, url: "http://h/mcp" }\n' },
  { name: 'a bad URL', global: 'mcpServers:\n  x: { url: "ftp://h" }\n' },
  { name: 'a number out of range', global: 'agent: { subagents: { maxDepth: 9 } }\n' },
  { name: 'an enum value it does not know', global: 'tools: { search: sometimes }\n' },
  { name: 'a model without its id', global: 'models:\n  m: { provider: openai }\n' },
  {
    name: 'a bad hook',
    global: 'hooks:\n  PreToolUse: [{ matcher: x, hooks: [{ type: shell, command: "" }] }]\n',
  },
  {
    name: 'a bad agent file and a bad task schedule',
    files: {
      '.niffler/agents/bad.md': '---\ndescription: 3\ntools: read_file\n---\nx\n',
      '.niffler/tasks/bad.yaml': 'prompt: x\nschedule: "every day"\n',
    },
  },
];

describe('the config commands’ loader (lazy zod, a memo of parses)', () => {
  it.each(CASES)('loads $name exactly as the loader with zod does', (c) => {
    const ws = makeWorkspace();
    if (c.global) ws.writeGlobal(c.global);
    if (c.repo) ws.writeRepo(c.repo);
    for (const [file, text] of Object.entries(c.files ?? {}))
      ws.write(path.join(ws.repo, file), text);
    if (c.repo || c.files) {
      const loaded = loadConfig({ cwd: ws.repo, env: ws.env });
      if (loaded.ok)
        trustRepository(
          path.join(ws.home, 'trust.json'),
          loaded.value.root,
          loaded.value.trust.contribution,
        );
    }
    const options = { cwd: ws.repo, env: ws.env };
    const truth = outcome(loadConfig(options));
    const memo = path.join(ws.home, 'cache', 'parses.json');
    const one = new first.ParseMemo(memo, 'test');
    first.provideRealZod(() => z, one);
    expect(outcome(first.loadConfig(options))).toEqual(truth);
    one.save();
    // A second run with that memo answers the same, without zod when the config was good.
    const second = freshProbe();
    second.provideRealZod(() => z, new second.ParseMemo(memo, 'test'));
    expect(outcome(second.loadConfig(options))).toEqual(truth);
    // What zod rejected (a bad config, a file skipped for its problems) is told by zod each time.
    const problems = (truth as { extensions?: { problems: string[] } }).extensions?.problems ?? [];
    const good = (truth as { error?: string }).error === undefined && problems.length === 0;
    expect(second.zodLoaded()).toBe(!good);
  });
});
