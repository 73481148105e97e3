import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.ts';
import { niffler } from './cli.ts';
import { makeE2eWorkspace } from './workspace.ts';

// bash's sandbox protects all of git, against the built binary, a real daemon and bubblewrap: a
// command cannot plant what the user's next git command runs outside it — through `commondir`,
// by moving `.git` aside and building another, by writing a submodule's config, or by pointing
// a `.git` file (a worktree's, a submodule's) elsewhere. A marker that git would create, were the
// planted fsmonitor ever run, must never appear.

const git = (cwd: string, ...args: string[]) =>
  execa('git', ['-c', 'protocol.file.allow=always', ...args], {
    cwd,
    env: {
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
      PATH: process.env['PATH'] ?? '',
      HOME: path.dirname(cwd),
    },
  });

const fakeModel = (llm: FakeLlm) =>
  `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: m\n`;

/** A repository with a commit, a submodule and a linked worktree (outside it). */
const setup = async () => {
  const ws = makeE2eWorkspace();
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  ws.writeGlobal(`${fakeModel(llm)}tools:\n  bash:\n    sandbox: bwrap\n`);
  rmSync(path.join(ws.repo, '.git'), { recursive: true });
  const sub = path.join(ws.base, 'subsrc');
  mkdirSync(sub);
  await git(sub, 'init', '-q');
  writeFileSync(path.join(sub, 's.txt'), 's\n');
  await git(sub, 'add', '.');
  await git(sub, 'commit', '-qm', 's');
  await git(ws.repo, 'init', '-q');
  writeFileSync(path.join(ws.repo, 'a.txt'), 'a\n');
  await git(ws.repo, 'add', '.');
  await git(ws.repo, 'commit', '-qm', 'a');
  await git(ws.repo, 'submodule', 'add', '-q', sub, 'sub');
  await git(ws.repo, 'commit', '-qm', 'sub');
  const worktree = path.join(ws.base, 'wt');
  await git(ws.repo, 'worktree', 'add', '-q', worktree);
  // A change, so that git status has something to look at everywhere.
  writeFileSync(path.join(ws.repo, 'a.txt'), 'changed\n');
  writeFileSync(path.join(worktree, 'a.txt'), 'changed\n');
  const marker = path.join(ws.base, 'MARKER');
  /** The user's next git commands, outside any sandbox: in the repository and the worktree. */
  const hostGit = async () => {
    for (const dir of [ws.repo, worktree])
      await execa('git', ['status'], {
        cwd: dir,
        reject: false,
        env: { PATH: process.env['PATH'] ?? '' },
      });
  };
  return { ws, llm, marker, worktree, hostGit };
};

/** A config that runs `touch MARKER` from any git command that reads it. */
const evilConfig = (marker: string) => `printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n'`;

/** `.git`, spelled so that no reader of the command line sees the name. */
const G = 'g=.gi; g=${g}t;';

const attacks = (marker: string): [string, string][] => [
  [
    'commondir: a copied gitdir with an fsmonitor, then .git/commondir pointed at it',
    `${G} cp -r $g evil; ${evilConfig(marker)} >> evil/config; echo ../evil > $g/commondir`,
  ],
  [
    'mv .git aside, then a new .git with an fsmonitor',
    `${G} mv $g old-git; mkdir -p $g; cp -r old-git/. $g/ 2>/dev/null; cp -r sub/ $g-copy; ${evilConfig(marker)} >> $g/config`,
  ],
  [
    "cd into the submodule's gitdir and append to its config",
    `cd .gi''t/modules/sub && ${evilConfig(marker)} >> config`,
  ],
  [
    "the submodule's directory moved away and made anew with a .git file that points elsewhere",
    `${G} cp -r $g/modules/sub evil2; sed -i /worktree/d evil2/config; ${evilConfig(marker)} >> evil2/config; mv sub sub-old; mkdir sub; echo "gitdir: ../evil2" > sub/$g`,
  ],
];

describe('a sandboxed command cannot plant what git runs later', () => {
  it.each([0, 1, 2, 3])('attack %i leaves the host’s next git status harmless', async (index) => {
    const { ws, llm, marker, hostGit } = await setup();
    const [name, command] = attacks(marker)[index]!;
    llm.queue(reply().tool('bash', { command }), reply().text('done'));
    const result = await ws.run(['--yes', '-p', name]);
    expect(result.exitCode).toBe(0);
    await hostGit();
    expect(existsSync(marker)).toBe(false);
    // The command ran (it was not refused for its name): it met the read-only mounts.
    const toolResult = JSON.stringify(llm.requests[1]!.body.messages.at(-1));
    expect(toolResult).toContain('exit code');
    expect(toolResult).toMatch(/Read-only file system|Device or resource busy|moved aside/);
  });

  it('a worktree’s .git file cannot be pointed at another gitdir (config.worktree)', async () => {
    const { ws, llm, marker, worktree, hostGit } = await setup();
    const common = path.join(ws.repo, '.git');
    // The main repository is outside the sandbox's view (/tmp is private there): a gitdir is
    // made from scratch, with the common dir named by the .git file.
    const command =
      `${G} p=$(sed 's/^gitdir: //' $g); mkdir evilwt; echo 'ref: refs/heads/wt' > evilwt/HEAD; ` +
      `echo \${p%/worktrees/*} > evilwt/commondir; ${evilConfig(marker)} > evilwt/config.worktree; ` +
      `echo "gitdir: evilwt" > $g`;
    llm.queue(reply().tool('bash', { command }), reply().text('done'));
    const result = await niffler(['--yes', '-p', 'redirect'], { cwd: worktree, env: ws.env });
    onTestFinished(
      async () => void (await niffler(['daemon', 'stop'], { cwd: worktree, env: ws.env })),
    );
    expect(result.exitCode).toBe(0);
    await execa('git', [
      'config',
      '--file',
      `${common}/config`,
      'extensions.worktreeConfig',
      'true',
    ]);
    await hostGit();
    expect(existsSync(marker)).toBe(false);
    expect(JSON.stringify(llm.requests[1]!.body.messages.at(-1))).toMatch(
      /Read-only file system|Device or resource busy/,
    );
  });

  it('a workspace that is not a repository yet: a .git the command makes is moved aside', async () => {
    const { ws, llm, marker } = await setup();
    const plain = path.join(ws.base, 'plain');
    mkdirSync(plain);
    const command = `${G} mkdir -p $g/hooks $g/objects $g/refs; echo 'ref: refs/heads/main' > $g/HEAD; ${evilConfig(marker)} > $g/config`;
    llm.queue(reply().tool('bash', { command }), reply().text('done'));
    const env = { ...ws.env };
    onTestFinished(async () => void (await niffler(['daemon', 'stop'], { cwd: plain, env })));
    const result = await niffler(['--yes', '-p', 'make a repo'], { cwd: plain, env });
    expect(result.exitCode).toBe(0);
    await execa('git', ['status'], { cwd: plain, reject: false });
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(path.join(plain, '.git'))).toBe(false);
    expect(readdirSync(plain).some((f) => f.startsWith('.git.niffler-blocked-'))).toBe(true);
    expect(JSON.stringify(llm.requests[1]!.body.messages.at(-1))).toContain('moved aside');
  });
});

describe('a git write asks', () => {
  it('git commit in bash is a protected call: refused in -p even with --yes, with the reason', async () => {
    const { ws, llm } = await setup();
    llm.queue(reply().tool('bash', { command: 'git commit -qam wip' }), reply().text('done'));
    const result = await ws.run(['--yes', '-p', 'commit it']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('denied: bash');
    const said = JSON.stringify(llm.requests[1]!.body.messages.at(-1));
    expect(said).toContain("`git commit` writes git's state");
    expect(said).toContain('only an interactive session can approve it');
    expect((await git(ws.repo, 'log', '--oneline')).stdout.split('\n')).toHaveLength(2);
  });

  it('write_file and edit_file refuse .git, a submodule’s .git and its gitdir, with --yes', async () => {
    const { ws, llm } = await setup();
    llm.queue(
      reply()
        .tool('write_file', { path: '.git/commondir', content: '../evil' }, { id: 'a' })
        .tool('write_file', { path: 'sub/.git', content: 'gitdir: ../evil' }, { id: 'b' })
        .tool(
          'edit_file',
          {
            path: '.git/modules/sub/config',
            oldText: '[core]',
            newText: '[core]\n\tfsmonitor = x',
          },
          { id: 'c' },
        ),
      reply().text('done'),
    );
    await ws.run(['--yes', '-p', 'plant it']);
    const results = (llm.requests[1]!.body.messages as { role: string; content: string }[])
      .filter((m) => m.role === 'tool')
      .map((m) => m.content);
    expect(results).toHaveLength(3);
    for (const text of results) expect(text).toContain("is git's own state");
    expect(existsSync(path.join(ws.repo, '.git', 'commondir'))).toBe(false);
  });
});
