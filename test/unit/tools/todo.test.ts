import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runTool, tempRepo, textOf } from './repo.ts';

describe('todo', () => {
  it('adds, updates and lists the session list, kept in the todo file (0600)', async () => {
    const repo = tempRepo();
    const { context } = repo;
    expect(textOf(await runTool(context, 'todo', { action: 'list' }))).toBe(
      'The todo list is empty.',
    );
    await runTool(context, 'todo', { action: 'add', items: ['read the code', 'write tests'] });
    await runTool(context, 'todo', { action: 'update', id: 1, status: 'done' });
    const result = await runTool(context, 'todo', {
      action: 'update',
      id: '2',
      status: 'in_progress',
    });
    expect(textOf(result)).toBe('[x] 1. read the code\n[>] 2. write tests');
    expect(textOf(await runTool(context, 'todo', { action: 'list' }))).toBe(textOf(result));
    expect(statSync(context.todoFile).mode & 0o777).toBe(0o600);
  });

  it('says what is wrong with an update', async () => {
    const repo = tempRepo();
    await runTool(repo.context, 'todo', { action: 'add', items: ['a'] });
    expect(
      await runTool(repo.context, 'todo', { action: 'update', id: 7, status: 'done' }),
    ).toEqual({
      ok: false,
      error: { code: 'not-found', message: 'no todo item has id 7; ids: 1' },
    });
    expect(await runTool(repo.context, 'todo', { action: 'add' })).toMatchObject({
      error: { code: 'invalid-args' },
    });
  });
});
