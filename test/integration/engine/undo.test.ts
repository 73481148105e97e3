import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness } from './harness.ts';

describe('undo of a turn’s file changes', () => {
  it('after a turn that wrote a file and ran bash -c "echo x > f", undo shows the diff and restores both', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n', config: 'agent:\n  git: false\n' });
    h.file('notes.txt', 'original\n');
    h.answer = () => 'once';
    h.llm.queue(
      reply().tool('write_file', { path: 'notes.txt', content: 'rewritten\n' }, { id: 'w' }),
      reply().tool('bash', { command: "bash -c 'echo x > f'" }, { id: 'b' }),
      reply().text('done'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'change things')).outcome).toBe('answered');
    expect(readFileSync(path.join(h.root, 'notes.txt'), 'utf8')).toBe('rewritten\n');
    expect(readFileSync(path.join(h.root, 'f'), 'utf8')).toBe('x\n');

    const plan = await h.client.request('session/undo', { sessionId: id, apply: false });
    expect(plan).toMatchObject({
      turn: 1,
      applied: false,
      changes: [
        { path: 'f', change: 'added' },
        { path: 'notes.txt', change: 'modified' },
      ],
    });
    expect(plan.diff).toContain('-rewritten\n+original');
    // Showing changed nothing.
    expect(existsSync(path.join(h.root, 'f'))).toBe(true);

    const done = await h.client.request('session/undo', { sessionId: id, apply: true });
    expect(done).toMatchObject({ turn: 1, applied: true, refused: [] });
    expect(readFileSync(path.join(h.root, 'notes.txt'), 'utf8')).toBe('original\n');
    expect(existsSync(path.join(h.root, 'f'))).toBe(false);
  });

  it('a turn that only read changes nothing and takes no snapshot', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n', config: 'agent:\n  git: false\n' });
    h.file('a.txt', 'a\n');
    h.llm.queue(reply().tool('read_file', { path: 'a.txt' }), reply().text('read it'));
    const id = await h.open();
    await h.prompt(id, 'read');
    await expect(h.client.request('session/undo', { sessionId: id, apply: false })).rejects.toThrow(
      'no turn of this session changed files (nothing to undo)',
    );
  });
});
