import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { makeE2eWorkspace } from './workspace.ts';

describe('undo writes only inside the workspace (built binary, real daemon)', () => {
  it('a directory a later turn replaced with a symlink to outside: undo creates nothing there', async () => {
    const ws = makeE2eWorkspace();
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: m\n`,
    );
    const outside = path.join(ws.base, 'outside');
    mkdirSync(outside);
    llm.queue(
      reply().tool('write_file', { path: 'sub/a/b/new.txt', content: 'new\n' }),
      reply().text('written'),
      reply().tool('bash', { command: `rm -rf sub && ln -s ${outside} sub` }),
      reply().text('linked'),
    );
    expect((await ws.run(['--yes', '-p', 'write it'])).exitCode).toBe(0);
    expect((await ws.run(['--yes', '--continue', '-p', 'link it'])).exitCode).toBe(0);
    const undone = await ws.run(['undo', '--turn', '1', '--yes']);
    expect(undone.exitCode).toBe(0);
    expect(undone.stdout + undone.stderr).toContain('sub/a/b/new.txt');
    expect(readdirSync(outside)).toEqual([]);
  });
});

describe('niffler undo (built binary, fake LLM)', () => {
  it('--yes puts the files back and prints the diff of what it put back, as the question would have', async () => {
    const ws = makeE2eWorkspace();
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n    toolProtocol: native\nmcpServers: {}\n`,
    );
    writeFileSync(path.join(ws.repo, 'a.txt'), 'one\ntwo\n');
    llm.queue(
      reply().tool('write_file', { path: 'a.txt', content: 'one\nTWO\n' }),
      reply().text('changed it'),
    );
    expect((await ws.run(['-p', 'change a.txt', '--yes'])).exitCode).toBe(0);
    expect(readFileSync(path.join(ws.repo, 'a.txt'), 'utf8')).toBe('one\nTWO\n');

    const undone = await ws.run(['undo', '--yes']);
    expect(undone.exitCode).toBe(0);
    expect(undone.stdout).toContain('Undid turn 1: 1 file(s) put back as they were before it:');
    expect(undone.stdout).toMatch(/modified +a\.txt/);
    expect(undone.stdout).toContain('The files changed like this:');
    expect(undone.stdout).toMatch(/^-TWO$/m);
    expect(undone.stdout).toMatch(/^\+two$/m);
    expect(readFileSync(path.join(ws.repo, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
  });
});
