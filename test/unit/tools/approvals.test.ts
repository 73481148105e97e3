import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  decideApproval,
  explainApproval,
  type ApprovalRequest,
  type ApprovalSettings,
} from '../../../src/main/trust/approval.ts';
import { ApprovalStore } from '../../../src/main/engine/approvals.ts';
import type { PolicyLayer } from '../../../src/main/trust/policy.ts';
import { builtinTools } from '../../../src/workers/protocol/tools.ts';

const builtin = (tool: string): ApprovalRequest => {
  const definition = builtinTools().find((candidate) => candidate.name === tool)!;
  return { tool, kind: 'builtin', defaultPolicy: definition.defaultPolicy };
};
const mcp = (tool: string, extra: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  tool,
  kind: 'mcp',
  server: tool.split('__')[0]!,
  ...extra,
});
/** One config layer's `tools.policy`. */
const layer = (rules: Record<string, 'allow' | 'ask' | 'deny'>): PolicyLayer[] => [
  { source: '', rules },
];
const none: ApprovalSettings = { policy: layer({}) };

describe('decideApproval', () => {
  it.each<[string, ApprovalRequest, ApprovalSettings, 'allow' | 'ask' | 'deny']>([
    ['read_file is allowed by default', builtin('read_file'), none, 'allow'],
    ['list_dir is allowed by default', builtin('list_dir'), none, 'allow'],
    ['path_info is allowed by default', builtin('path_info'), none, 'allow'],
    ['glob is allowed by default', builtin('glob'), none, 'allow'],
    ['grep is allowed by default', builtin('grep'), none, 'allow'],
    ['todo is allowed by default', builtin('todo'), none, 'allow'],
    ['write_file asks by default', builtin('write_file'), none, 'ask'],
    ['edit_file asks by default', builtin('edit_file'), none, 'ask'],
    ['bash asks by default', builtin('bash'), none, 'ask'],
    ['fetch asks by default', builtin('fetch'), none, 'ask'],
    [
      'readOnly without defaultPolicy allows',
      { tool: 'x', kind: 'builtin', readOnly: true },
      none,
      'allow',
    ],
    ['a built-in with no flags asks', { tool: 'x', kind: 'builtin' }, none, 'ask'],
    ['MCP tools ask by default', mcp('github__create_issue'), none, 'ask'],
    ['MCP readOnlyHint allows', mcp('memory__read_graph', { readOnlyHint: true }), none, 'allow'],
    [
      'MCP readOnlyHint false asks',
      mcp('memory__read_graph', { readOnlyHint: false }),
      none,
      'ask',
    ],
    [
      'destructiveHint alone decides nothing',
      mcp('fs__rm', { destructiveHint: true }),
      none,
      'ask',
    ],
    ['config allows by exact name', builtin('bash'), { policy: layer({ bash: 'allow' }) }, 'allow'],
    [
      'config asks for a read-only built-in',
      builtin('read_file'),
      { policy: layer({ read_file: 'ask' }) },
      'ask',
    ],
    [
      'config allows an MCP server by glob',
      mcp('memory__create'),
      { policy: layer({ 'memory__*': 'allow' }) },
      'allow',
    ],
    [
      'a glob for another server does not match',
      mcp('github__x'),
      { policy: layer({ 'memory__*': 'allow' }) },
      'ask',
    ],
    [
      'exact name beats glob',
      mcp('memory__delete'),
      { policy: layer({ 'memory__*': 'allow', memory__delete: 'deny' }) },
      'deny',
    ],
    [
      'longer glob beats shorter',
      mcp('memory__delete_all'),
      { policy: layer({ '*': 'allow', 'memory__delete*': 'ask' }) },
      'ask',
    ],
    [
      'equal globs: the strictest wins',
      mcp('ab__xy'),
      { policy: layer({ 'ab__*': 'allow', '*__xy': 'deny' }) },
      'deny',
    ],
    [
      'config ask beats readOnlyHint',
      mcp('m__r', { readOnlyHint: true }),
      { policy: layer({ 'm__*': 'ask' }) },
      'ask',
    ],
    [
      'trusted server allows',
      mcp('local__run'),
      { policy: layer({}), trustedServers: ['local'] },
      'allow',
    ],
    [
      'config beats trust',
      mcp('local__run'),
      { policy: layer({ local__run: 'ask' }), trustedServers: ['local'] },
      'ask',
    ],
    [
      'trust of another server does not count',
      mcp('other__run'),
      { policy: layer({}), trustedServers: ['local'] },
      'ask',
    ],
    ['--yes allows what asks', builtin('bash'), { policy: layer({}), yes: true }, 'allow'],
    ['--yes allows MCP tools', mcp('github__push'), { policy: layer({}), yes: true }, 'allow'],
    [
      '--yes never beats a config deny',
      builtin('bash'),
      { policy: layer({ bash: 'deny' }), yes: true },
      'deny',
    ],
    [
      'config deny beats a remembered allow',
      builtin('bash'),
      { policy: layer({ 'b*': 'deny' }), session: { bash: 'allow' } },
      'deny',
    ],
    [
      'remembered for the session allows',
      builtin('bash'),
      { policy: layer({}), session: { bash: 'allow' } },
      'allow',
    ],
    [
      'remembered for the repo allows',
      builtin('edit_file'),
      { policy: layer({}), repo: { edit_file: 'allow' } },
      'allow',
    ],
    [
      'remembered beats config ask',
      builtin('bash'),
      { policy: layer({ bash: 'ask' }), repo: { bash: 'allow' } },
      'allow',
    ],
    [
      'a remembered deny refuses',
      builtin('read_file'),
      { policy: layer({}), session: { read_file: 'deny' } },
      'deny',
    ],
    [
      'session beats repo',
      builtin('bash'),
      { policy: layer({}), session: { bash: 'deny' }, repo: { bash: 'allow' } },
      'deny',
    ],
    [
      'remembered globs match',
      mcp('memory__add'),
      { policy: layer({}), repo: { 'memory__*': 'allow' } },
      'allow',
    ],
  ])('%s', (_name, request, settings, expected) => {
    expect(decideApproval(request, settings)).toBe(expected);
  });

  it('explains the rule that decided', () => {
    expect(explainApproval(mcp('memory__x'), { policy: layer({ 'memory__*': 'deny' }) })).toEqual({
      decision: 'deny',
      reason: 'tools.policy "memory__*": deny',
    });
  });
});

describe('ApprovalStore', () => {
  const tempFile = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'niffler-approvals-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    return path.join(dir, 'home', 'approvals.json');
  };

  it('keeps session answers in memory and repo answers in a 0600 file keyed by root', async () => {
    const file = tempFile();
    const store = new ApprovalStore(file, '/repo/a');
    await store.load();
    await store.remember('session', 's1', 'bash', 'allow');
    await store.remember('repo', 's1', 'memory__*', 'allow');
    expect(store.remembered('s1')).toEqual({
      session: { bash: 'allow' },
      repo: { 'memory__*': 'allow' },
    });
    expect(store.remembered('s2')).toEqual({ session: {}, repo: { 'memory__*': 'allow' } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      version: 1,
      workspaces: { '/repo/a': { 'memory__*': 'allow' } },
    });
    const again = new ApprovalStore(file, '/repo/a');
    await again.load();
    expect(again.remembered('s9').repo).toEqual({ 'memory__*': 'allow' });
    const other = new ApprovalStore(file, '/repo/b');
    await other.load();
    expect(other.remembered('s1').repo).toEqual({});
  });

  it('treats a broken file as empty and rewrites it on save', async () => {
    const file = tempFile();
    const store = new ApprovalStore(file, '/repo');
    await store.remember('repo', 's', 'bash', 'deny');
    writeFileSync(file, '{ broken');
    await store.load();
    expect(store.remembered('s').repo).toEqual({});
    await store.remember('repo', 's', 'fetch', 'allow');
    expect(JSON.parse(readFileSync(file, 'utf8')).workspaces['/repo']).toEqual({ fetch: 'allow' });
    await store.forgetRepo();
    expect(JSON.parse(readFileSync(file, 'utf8')).workspaces).toEqual({});
  });

  it('never follows a symlinked approvals file: nothing is remembered from it, and the problem is named', async () => {
    const file = tempFile();
    const planted = path.join(path.dirname(path.dirname(file)), 'planted.json');
    writeFileSync(
      planted,
      JSON.stringify({ version: 1, workspaces: { '/repo': { bash: 'allow' } } }),
    );
    mkdirSync(path.dirname(file), { recursive: true });
    symlinkSync(planted, file);
    const store = new ApprovalStore(file, '/repo');
    await store.load();
    expect(store.remembered('s').repo).toEqual({});
    expect(store.problem).toMatch(
      /approvals\.json: it is a symlink; no remembered answer is used from it/,
    );
    await store.remember('repo', 's', 'grep', 'allow');
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(planted, 'utf8')).workspaces['/repo']).toEqual({
      bash: 'allow',
    });
  });
});
