import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAlive, runTool, tempRepo, textOf, waitForLines } from './repo.ts';

const pidsIn = (file: string): number[] =>
  readFileSync(file, 'utf8').trim().split('\n').map(Number);

describe('bash', () => {
  it('runs in the workspace root and reports stdout, stderr and exit code', async () => {
    const repo = tempRepo();
    const result = await runTool(repo.context, 'bash', { command: 'pwd; echo oops >&2; exit 3' });
    expect(result).toEqual({
      ok: true,
      output: `${repo.root}\noops\n[exit code 3]`,
      data: { exitCode: 3, signal: null, sandboxed: false },
    });
  });

  it('reports the signal that ended the command', async () => {
    const repo = tempRepo();
    const result = await runTool(repo.context, 'bash', { command: 'kill -TERM $$' });
    expect(result).toMatchObject({ ok: true, data: { signal: 'SIGTERM', exitCode: null } });
    expect(textOf(result)).toBe('(no output)\n[killed by signal SIGTERM]');
  });

  it('ends the whole process group on timeout: no child survives', async () => {
    const repo = tempRepo();
    const pids = path.join(repo.root, 'pids');
    const command = `sleep 300 & echo $! > pids; (sleep 300; echo never) & echo $! >> pids; wait`;
    const result = await runTool(repo.context, 'bash', { command, timeout: 1 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    expect(textOf(result)).toContain('timed out after 1s; the whole process group was ended');
    expect(pidsIn(pids)).toHaveLength(2);
    for (const pid of pidsIn(pids)) expect(isAlive(pid)).toBe(false);
  });

  it('ends the whole group when the task is cancelled', async () => {
    const repo = tempRepo();
    const pids = path.join(repo.root, 'pids');
    const cancel = new AbortController();
    const { default: runToolTask } = await import('../../../src/workers/tools/worker.ts');
    const command = 'sleep 300 & echo $! > pids; sleep 300 & echo $! >> pids; wait';
    const running = runToolTask(
      { tool: 'bash', args: { command }, context: repo.context },
      cancel.signal,
    );
    await waitForLines(pids, 2);
    cancel.abort();
    expect(await running).toMatchObject({ ok: false, error: { code: 'canceled' } });
    for (const pid of pidsIn(pids)) expect(isAlive(pid)).toBe(false);
  });

  it('kills a group that ignores SIGTERM', async () => {
    const repo = tempRepo();
    const command = `trap '' TERM; sleep 300 & echo $! > pid; wait; wait`;
    const result = await runTool(repo.context, 'bash', { command, timeout: 1 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    expect(isAlive(pidsIn(path.join(repo.root, 'pid'))[0]!)).toBe(false);
  });

  it('ends background jobs left behind when the command returns', async () => {
    const repo = tempRepo();
    const result = await runTool(repo.context, 'bash', { command: 'sleep 300 & echo $! > pid' });
    expect(result).toMatchObject({ ok: true, data: { exitCode: 0 } });
    expect(isAlive(pidsIn(path.join(repo.root, 'pid'))[0]!)).toBe(false);
  });

  it('caps output, keeping head and tail, and saves it all where read_file can page it', async () => {
    const repo = tempRepo({ maxChars: 1000 });
    const result = await runTool(repo.context, 'bash', { command: 'seq 1 100000' });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.output).toMatch(/\n99999\n100000\n\[exit code 0\]$/);
    expect(result.output).toContain('output cut: 1000 of 588895 characters');
    expect(result.output).toContain('The full output (100000 lines)');
    expect(result.savedTo?.startsWith(repo.context.outputsDir)).toBe(true);
    const page = await runTool(repo.context, 'read_file', {
      path: result.savedTo,
      offset: 99999,
      limit: 5,
    });
    expect(textOf(page)).toBe(' 99999\t99999\n100000\t100000\n');
  });

  it('clamps a timeout above the maximum and says so', async () => {
    const repo = tempRepo({ bashMaxTimeout: 5 });
    const result = await runTool(repo.context, 'bash', { command: 'true', timeout: 900 });
    expect(textOf(result)).toBe(
      '(no output)\n[timeout 900s is above the maximum; used 5s; exit code 0]',
    );
  });
});
