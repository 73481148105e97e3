import { execa } from 'execa';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { trustRepo } from './trust-helper.ts';
import { startHarness } from './harness.ts';

const lastUser = (request: RecordedRequest): string =>
  (request.body.messages as { role: string; content: string }[])
    .filter((m) => m.role === 'user')
    .at(-1)?.content ?? '';

const gitCommit = async (root: string, message: string) => {
  await execa('git', ['init', '-q'], { cwd: root });
  writeFileSync(path.join(root, 'README.md'), 'hello\n');
  await execa('git', ['add', '.'], { cwd: root });
  await execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', message], {
    cwd: root,
  });
};

describe('custom slash commands', () => {
  it('expands $ARGUMENTS, @file and !`git log -1` into the request, in a trusted repository', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    await gitCommit(h.root, 'the first commit of the test');
    h.file('notes/plan.txt', 'step one: write tests\n');
    h.file(
      '.niffler/commands/git/commit.md',
      '---\ndescription: commit with a message\nargument-hint: MESSAGE\n---\n' +
        'Last commit: !`git log -1 --format=%s`\nPlan: @notes/plan.txt\nCommit as: $ARGUMENTS (first word $1)\n',
    );
    await trustRepo(h);
    const listed = await h.client.request('extensions/list', {});
    expect(listed.commands).toEqual([
      expect.objectContaining({ name: 'git:commit', argumentHint: 'MESSAGE', source: 'repo' }),
    ]);
    h.llm.queue(reply().text('committed'));
    const id = await h.open();
    const summary = await h.prompt(id, '/git:commit fix typo', { interactive: false });
    expect(summary.outcome).toBe('answered');
    const sent = lastUser(h.llm.requests.at(-1)!);
    expect(sent).toContain('Last commit: the first commit of the test');
    expect(sent).toContain('<file path="notes/plan.txt">\nstep one: write tests\n</file>');
    expect(sent).toContain('Commit as: fix typo (first word fix)');
    expect(sent).not.toContain('!`');
  });

  it('reads a .claude/commands file unchanged (Claude Code frontmatter, $ARGUMENTS), no trust needed', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    h.file(
      '.claude/commands/explain.md',
      '---\ndescription: Explain a part of the code\nargument-hint: [file]\nmodel: claude-3-5-haiku-20241022\ndisable-model-invocation: true\n---\n\nExplain $ARGUMENTS to a new colleague.\n',
    );
    await h.client.request('config/reload', {});
    h.llm.queue(reply().text('explained'));
    const id = await h.open();
    expect((await h.prompt(id, '/explain src/main.ts')).outcome).toBe('answered');
    expect(lastUser(h.llm.requests.at(-1)!)).toBe('Explain src/main.ts to a new colleague.');
    // Claude Code's model names are not niffler's: the session's model answers, and says so.
    expect(h.events).toContainEqual(
      expect.objectContaining({
        type: 'notice',
        text: expect.stringContaining(
          'command /explain asks for model "claude-3-5-haiku-20241022"',
        ),
      }),
    );
  });

  it('in an untrusted repository, a command with shell expansion is ignored with one line saying so', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    h.file('.niffler/commands/leak.md', 'Here: !`touch pwned && echo ran`\n');
    h.file('.niffler/commands/plain.md', 'Just say hi to $1\n');
    await h.client.request('config/reload', {});
    const listed = await h.client.request('extensions/list', {});
    expect(listed.commands.map((c) => c.name)).toEqual(['plain']);
    h.llm.queue(reply().text('a'), reply().text('b'));
    const id = await h.open();
    await h.prompt(id, '/leak now');
    expect(lastUser(h.llm.requests.at(-1)!)).toBe('/leak now');
    const notices = h.events.filter((e) => e.type === 'notice' && e.text.includes('not trusted'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ text: expect.stringContaining('commands.leak') });
    await h.prompt(id, '/plain Ada');
    expect(lastUser(h.llm.requests.at(-1)!)).toBe('Just say hi to Ada');
    const user = path.join(h.home, 'commands');
    mkdirSync(user);
    writeFileSync(path.join(user, 'bad.md'), '---\nagent: [x\n---\n');
    await h.client.request('config/reload', {});
    expect((await h.client.request('extensions/list', {})).problems.join('\n')).toMatch(
      /commands\/bad\.md:2: /,
    );
  });
});
