import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildSystemPrompt } from '../../../src/main/engine/context/prompt.ts';
import { FILE_BUDGET, INSTRUCTIONS_BUDGET } from '../../../src/main/engine/context/instructions.ts';

const workspace = () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-ctx-')));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const root = path.join(base, 'repo');
  const home = path.join(base, 'home');
  mkdirSync(path.join(root, 'pkg', 'deep'), { recursive: true });
  mkdirSync(home, { recursive: true });
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  return { base, root, home, write };
};

const build = (
  ws: ReturnType<typeof workspace>,
  extra: Partial<Parameters<typeof buildSystemPrompt>[0]> = {},
) =>
  buildSystemPrompt({
    root: ws.root,
    home: ws.home,
    hasTools: true,
    trusted: true,
    git: false,
    ...extra,
  });

describe('instruction files', () => {
  it('reads yours, then the repository’s from the root down to the working directory, in order', async () => {
    const ws = workspace();
    ws.write(path.join(ws.home, 'NIFFLER.md'), 'USER-RULE');
    ws.write(path.join(ws.root, 'AGENTS.md'), 'ROOT-AGENTS');
    ws.write(path.join(ws.root, 'CLAUDE.md'), 'ROOT-CLAUDE');
    ws.write(path.join(ws.root, 'pkg', 'AGENTS.md'), 'PKG-AGENTS');
    ws.write(path.join(ws.root, 'other', 'AGENTS.md'), 'OTHER-AGENTS');
    const prompt = await build(ws, { cwd: path.join(ws.root, 'pkg', 'deep') });
    const order = ['USER-RULE', 'ROOT-AGENTS', 'ROOT-CLAUDE', 'PKG-AGENTS'].map((m) =>
      prompt.text.indexOf(m),
    );
    expect(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    expect(prompt.text).not.toContain('OTHER-AGENTS');
    expect(prompt.text).toContain('## pkg/AGENTS.md\n\nPKG-AGENTS');
  });

  it('an untrusted repository gives only your own files', async () => {
    const ws = workspace();
    ws.write(path.join(ws.home, 'AGENTS.md'), 'USER-RULE');
    ws.write(path.join(ws.root, 'AGENTS.md'), 'ROOT-AGENTS');
    const prompt = await build(ws, { trusted: false });
    expect(prompt.text).toContain('USER-RULE');
    expect(prompt.text).not.toContain('ROOT-AGENTS');
    expect(prompt.untrusted).toEqual(['AGENTS.md']);
  });

  it('@path imports a file of the workspace, nested; one outside it, a loop, or too deep is refused', async () => {
    const ws = workspace();
    ws.write(path.join(ws.base, 'outside.md'), 'MARKER-OUTSIDE');
    ws.write(path.join(ws.root, 'docs', 'style.md'), 'STYLE-RULES see @more.md');
    ws.write(path.join(ws.root, 'docs', 'more.md'), 'MORE-RULES');
    ws.write(path.join(ws.root, 'docs', 'loop.md'), 'LOOP @loop.md');
    ws.write(
      path.join(ws.root, 'CLAUDE.md'),
      'Follow @docs/style.md\nAlso @../outside.md and @docs/loop.md; email me@example.com; types @types/node.\n',
    );
    const prompt = await build(ws);
    expect(prompt.text).toContain('Follow STYLE-RULES see MORE-RULES');
    expect(prompt.text).not.toContain('MARKER-OUTSIDE');
    expect(prompt.text).toContain('me@example.com');
    expect(prompt.refused.map((r) => [r.file, r.why.split(' (')[0]])).toEqual([
      [
        '@../outside.md (in CLAUDE.md)',
        'resolves to ' + path.join(ws.base, 'outside.md') + ', outside the allowed directories',
      ],
      ['@loop.md (in docs/loop.md)', 'imports itself'],
    ]);
  });

  it('keeps each file to its budget and all to the shared one, and says which file was cut and by how much', async () => {
    const ws = workspace();
    ws.write(path.join(ws.root, 'AGENTS.md'), 'a'.repeat(FILE_BUDGET + 1000));
    ws.write(path.join(ws.root, 'CLAUDE.md'), 'b'.repeat(FILE_BUDGET - 1000));
    ws.write(path.join(ws.root, 'pkg', 'AGENTS.md'), 'c'.repeat(5000));
    const prompt = await build(ws, { cwd: path.join(ws.root, 'pkg') });
    expect(prompt.cut).toHaveLength(2);
    expect(prompt.cut[0]).toBe(`AGENTS.md (${FILE_BUDGET} of ${FILE_BUDGET + 1000} bytes)`);
    expect(prompt.cut[1]).toMatch(/^pkg\/AGENTS\.md \(\d+ of 5000 bytes\)$/);
    expect(prompt.text).toContain('b'.repeat(FILE_BUDGET - 1000));
    expect(prompt.instructionChars).toBeLessThan(INSTRUCTIONS_BUDGET + 1000);
    expect(prompt.text).toContain('[AGENTS.md is cut here: instructions are limited to');
  });

  it('CLAUDE.md = @AGENTS.md + notes gives AGENTS.md once and the notes whole, a 15–30 KB pair uncut', async () => {
    const ws = workspace();
    const agents = '# Agents\n' + 'Run npm test before you commit.\n'.repeat(500);
    const notes = '## Claude notes\n' + 'Prefer small commits.\n'.repeat(600);
    ws.write(path.join(ws.root, 'AGENTS.md'), agents);
    ws.write(path.join(ws.root, 'CLAUDE.md'), `@AGENTS.md\n\n${notes}`);
    const prompt = await build(ws);
    expect(Buffer.byteLength(agents + notes)).toBeGreaterThan(28_000);
    expect(prompt.cut).toEqual([]);
    expect(prompt.text.split('Run npm test before you commit.').length - 1).toBe(500);
    expect(prompt.text).toContain('[@AGENTS.md: given once, above]');
    expect(prompt.text).toContain(notes.trim());
  });

  it('a trusted server’s instructions join, each bounded', async () => {
    const ws = workspace();
    const prompt = await build(ws, {
      instructions: [{ server: 'db', text: 'Use read-only queries. ' + 'x'.repeat(5000) }],
    });
    expect(prompt.text).toContain('## Instructions from MCP servers');
    expect(prompt.text).toContain('### db\n\nUse read-only queries.');
    expect(prompt.text).toContain('[cut here]');
  });
});

describe('git context', () => {
  const git = (cwd: string, ...args: string[]) =>
    execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd });

  it('branch, short status and recent commits; a planted fsmonitor never runs', async () => {
    const ws = workspace();
    await git(ws.root, 'init', '-q', '-b', 'main');
    ws.write(path.join(ws.root, 'a.txt'), 'one\n');
    await git(ws.root, 'add', '.');
    await git(ws.root, 'commit', '-qm', 'first commit');
    ws.write(path.join(ws.root, 'a.txt'), 'two\n');
    ws.write(path.join(ws.root, 'new.txt'), 'x');
    const marker = path.join(ws.base, 'fsmonitor-ran');
    const hook = path.join(ws.base, 'hook.sh');
    ws.write(hook, `#!/bin/sh\ntouch ${marker}\n`);
    chmodSync(hook, 0o755);
    await git(ws.root, 'config', 'core.fsmonitor', hook);
    const prompt = await build(ws, { git: true });
    expect(prompt.text).toContain('## Git\n\nBranch: main, no upstream');
    expect(prompt.text).toContain('Changes (2):\n   M a.txt\n  ?? new.txt');
    expect(prompt.text).toMatch(/Recent commits:\n {2}[0-9a-f]+ first commit \(/);
    expect(existsSync(marker)).toBe(false);
  });

  it('is simply absent outside a git repository or with agent.git off', async () => {
    const ws = workspace();
    expect((await build(ws, { git: true })).text).not.toContain('## Git');
  });
});
