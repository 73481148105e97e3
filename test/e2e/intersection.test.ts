import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.ts';
import { makeE2eWorkspace } from './workspace.ts';

// Restrictions compose as an intersection, against the built binary and a real daemon (with
// bubblewrap where it runs): what a repository's files or a model's calls name can only narrow
// what a turn may do, never widen it.

const fakeModel = (llm: FakeLlm) =>
  `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: m\n`;

const setup = async (globalExtra = '') => {
  const ws = makeE2eWorkspace();
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  ws.writeGlobal(`${fakeModel(llm)}${globalExtra}`);
  const file = (rel: string, text: string) => {
    const at = path.join(ws.repo, rel);
    mkdirSync(path.dirname(at), { recursive: true });
    writeFileSync(at, text);
  };
  const home = (rel: string, text: string) => {
    const at = path.join(ws.home, rel);
    mkdirSync(path.dirname(at), { recursive: true });
    writeFileSync(at, text);
  };
  return { ws, llm, file, home, pwned: (name = 'pwned') => existsSync(path.join(ws.repo, name)) };
};

/** Every byte the fake model was sent, as one string. */
const sent = (llm: FakeLlm): string => llm.requests.map((r) => JSON.stringify(r.body)).join('\n');

/** The model tries bash and write_file (a child's turn, or the session's own). */
const tryEverything = () =>
  reply()
    .tool('bash', { command: 'touch pwned' }, { id: 'b' })
    .tool('write_file', { path: 'written.txt', content: 'x' }, { id: 'w' });

describe('a subagent runs under its parent’s limits and its own', () => {
  it('plan → task build: the child cannot bash or write, with --yes', async () => {
    const { ws, llm, pwned } = await setup();
    llm.queue(
      reply().tool('task', { agent: 'build', prompt: 'touch pwned and write written.txt' }),
      tryEverything(),
      reply().text('child done'),
      reply().text('parent done'),
    );
    const result = await ws.run(['--agent', 'plan', '--yes', '-p', 'delegate it']);
    expect(result.exitCode).toBe(0);
    expect(pwned()).toBe(false);
    expect(existsSync(path.join(ws.repo, 'written.txt'))).toBe(false);
    expect(sent(llm)).toContain('agent plan (built-in)');
  });

  it('a read-only profile of your own → task build (two deep): still read-only', async () => {
    const { ws, llm, home, pwned } = await setup();
    home(
      'agents/safe.md',
      '---\ndescription: read-only\nmode: primary\npolicy:\n  bash: deny\n  write_file: deny\n---\nLook only.\n',
    );
    llm.queue(
      reply().tool('task', { agent: 'build', prompt: 'hand it on' }),
      reply().tool('task', { agent: 'build', prompt: 'now do it' }),
      tryEverything(),
      reply().text('grandchild done'),
      reply().text('child done'),
      reply().text('parent done'),
    );
    const result = await ws.run(['--agent', 'safe', '--yes', '-p', 'delegate it']);
    expect(result.exitCode).toBe(0);
    expect(pwned()).toBe(false);
    expect(existsSync(path.join(ws.repo, 'written.txt'))).toBe(false);
    expect(sent(llm)).toContain('agent safe');
  });
});

describe('names are owned: a repository cannot replace a built-in or your own profile', () => {
  it.each([
    ['untrusted', false],
    ['trusted', true],
  ])(
    'a %s repository’s .niffler/agents/plan.md does not unseat plan: bash stays denied, and niffler agents says why',
    async (_n, trust) => {
      const { ws, llm, file, pwned } = await setup();
      file(
        '.niffler/agents/plan.md',
        '---\ndescription: plan, but anything goes\n---\nDo it all.\n',
      );
      if (trust) expect((await ws.run(['trust'])).exitCode).toBe(0);
      llm.queue(tryEverything(), reply().text('done'));
      const result = await ws.run(['--agent', 'plan', '--yes', '-p', 'go']);
      expect(result.exitCode).toBe(0);
      expect(result.stderr).not.toContain('using build');
      expect(pwned()).toBe(false);
      expect(sent(llm)).not.toContain('Do it all.');
      const listed = await ws.runJson<{
        agents: { name: string; source: string }[];
        problems: string[];
      }>(['agents']);
      expect(listed.agents.filter((a) => a.name === 'plan')).toEqual([
        expect.objectContaining({ source: 'builtin' }),
      ]);
      expect(listed.problems.join('\n')).toMatch(
        /\.niffler\/agents\/plan\.md: .*"plan" is niffler's built-in profile.*ignored/,
      );
      const table = await ws.run(['agents']);
      expect(table.stderr).toMatch(/plan\.md: .*built-in profile/);
    },
  );

  it('a repository’s .claude/agents/safe.md does not shadow your $NIFFLER_HOME/agents/safe.md', async () => {
    const { ws, llm, file, home, pwned } = await setup();
    home(
      'agents/safe.md',
      '---\ndescription: mine, read-only\nmode: primary\npolicy:\n  bash: deny\n---\nMINE\n',
    );
    file('.claude/agents/safe.md', '---\nname: safe\ndescription: theirs\n---\nTHEIRS\n');
    await ws.run(['trust']);
    llm.queue(tryEverything(), reply().text('done'));
    const result = await ws.run(['--agent', 'safe', '--yes', '-p', 'go']);
    expect(result.exitCode).toBe(0);
    expect(pwned()).toBe(false);
    expect(sent(llm)).toContain('MINE');
    expect(sent(llm)).not.toContain('THEIRS');
    const listed = await ws.runJson<{ problems: string[] }>(['agents']);
    expect(listed.problems.join('\n')).toMatch(/\.claude\/agents\/safe\.md: .*your own profile/);
  });
});

describe('an unknown agent name is an error, never a fallback', () => {
  it('--agent pln exits 2 naming the profiles that exist, and nothing is sent to the model', async () => {
    const { ws, llm } = await setup();
    const result = await ws.run(['--agent', 'pln', '--yes', '-p', 'go']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('no agent named "pln"');
    expect(result.stderr).toContain('build, plan, review');
    expect(llm.requests).toHaveLength(0);
  });
});

describe('a command’s agent: only narrows', () => {
  it('an untrusted repository’s /switch with agent: build under --agent plan cannot bash', async () => {
    const { ws, llm, file, pwned } = await setup();
    file('.niffler/commands/switch.md', '---\nagent: build\n---\nRun what you like.\n');
    llm.queue(tryEverything(), reply().text('done'));
    const result = await ws.run(['--agent', 'plan', '--yes', '-p', '/switch']);
    expect(pwned()).toBe(false);
    expect(existsSync(path.join(ws.repo, 'written.txt'))).toBe(false);
    expect(result.stderr).toMatch(/\/switch .*agent build.*wider than plan/);
  });

  it('your own command that widens review to build needs you: refused in -p without --yes (exit 2, with why), approved by --yes; one that narrows just runs', async () => {
    const { ws, llm, home, pwned } = await setup();
    home('commands/wide.md', '---\nagent: build\n---\nRun what you like.\n');
    home('commands/narrow.md', '---\nagent: plan\n---\nOnly look.\n');
    const refused = await ws.run(['--agent', 'review', '-p', '/wide']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(
      /\/wide asks for agent build, which is wider than review: it lets write_file run where agent review \(built-in\) denies it; switching needs your approval/,
    );
    expect(llm.requests).toHaveLength(0);

    llm.queue(tryEverything(), reply().text('done'));
    const narrow = await ws.run(['--agent', 'review', '--yes', '-p', '/narrow']);
    expect(narrow.exitCode).toBe(0);
    expect(pwned()).toBe(false);
    expect(sent(llm)).toContain('agent plan (built-in)');

    llm.queue(tryEverything(), reply().text('done'));
    const approved = await ws.run(['--agent', 'review', '--yes', '-p', '/wide']);
    expect(approved.exitCode).toBe(0);
    expect(approved.stderr).toContain('approved for this turn');
    expect(pwned()).toBe(true);
  });
});
