import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness, toolMessages } from './harness.ts';

const git = (cwd: string, ...args: string[]) =>
  execa('git', args, {
    cwd,
    env: {
      PATH: process.env['PATH'] ?? '',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });

describe('a git write in bash (the built binary’s daemon, bubblewrap)', () => {
  it('asks with the reason; approved, it runs with .git writable; denied, it does not run', async () => {
    const h = await startHarness('binary', {
      mcp: '  {}\n',
      config: 'tools:\n  bash:\n    sandbox: bwrap\n',
    });
    await git(h.root, 'init', '-q');
    // Who commits, as a user's git config says (the sandbox passes no GIT_* variables).
    await git(h.root, 'config', 'user.name', 't');
    await git(h.root, 'config', 'user.email', 't@t');
    writeFileSync(path.join(h.root, 'a.txt'), 'a\n');
    await git(h.root, 'add', '.');
    await git(h.root, 'commit', '-qm', 'first');
    writeFileSync(path.join(h.root, 'a.txt'), 'changed\n');
    const id = await h.open();

    h.answer = () => 'deny';
    h.llm.queue(reply().tool('bash', { command: 'git commit -qam denied' }), reply().text('ok'));
    expect((await h.prompt(id, 'commit')).denied).toEqual(['bash']);
    expect(h.approvals.at(-1)!.reason).toContain("`git commit` writes git's state");

    // A plain command cannot write .git either: it meets the read-only mount.
    h.answer = () => 'once';
    h.llm.queue(
      reply().tool('bash', { command: 'g=.gi; g=${g}t; touch $g/x' }),
      reply().text('ok'),
    );
    await h.prompt(id, 'touch');
    expect(String(toolMessages(h.llm.requests.at(-1)!.body).at(-1)!.content)).toContain(
      'Read-only file system',
    );

    h.llm.queue(reply().tool('bash', { command: 'git commit -qam approved' }), reply().text('ok'));
    const approvals = h.approvals.length;
    expect((await h.prompt(id, 'commit')).denied).toEqual([]);
    expect(h.approvals.length).toBe(approvals + 1);
    const log = (await git(h.root, 'log', '--format=%s')).stdout.split('\n');
    expect(log).toEqual(['approved', 'first']);
  });
});
