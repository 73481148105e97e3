import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { nifflerPaths } from '../../src/main/paths.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { makeE2eWorkspace } from './workspace.ts';

describe('niffler task (built binary, fake LLM)', () => {
  it('task run prints the answer and leaves a resumable session; list, show and history say what ran and what was skipped', async () => {
    const ws = makeE2eWorkspace();
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n`,
    );
    const tasks = path.join(ws.home, 'tasks');
    mkdirSync(tasks);
    writeFileSync(
      path.join(tasks, 'greet.yaml'),
      'description: greets someone\ninputs:\n  who: { required: true }\nprompt: "Greet {{who}} in one word"\n',
    );
    writeFileSync(path.join(tasks, 'broken.yaml'), 'prompt: x\nschedule: "every day"\n');

    llm.queue(reply().text('Hello, Ada.'));
    const ran = await ws.run(['task', 'run', 'greet', '--input', 'who=Ada']);
    expect(ran.exitCode).toBe(0);
    expect(ran.stdout).toBe('Hello, Ada.');
    const id = /session (\S+):/.exec(ran.stderr)?.[1];
    expect(id).toBeDefined();
    expect(
      (llm.requests[0]!.body.messages as { role: string; content: string }[]).at(-1)!.content,
    ).toBe('Greet Ada in one word');

    const missing = await ws.run(['task', 'run', 'greet']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('task greet needs --input who=…');

    const list = await ws.run(['task', 'list']);
    expect(list.stdout).toMatch(/greet\s+-\s+-\s+answered/);
    expect(list.stderr).toContain('broken.yaml:2 schedule: "every day" is not a cron schedule');
    const history = await ws.runJson<{ outcome: string; sessionId: string }[]>([
      'task',
      'history',
      'greet',
    ]);
    expect(history).toEqual([expect.objectContaining({ outcome: 'answered', sessionId: id })]);
    expect(await ws.runJson<{ inputs: object }>(['task', 'show', 'greet'])).toMatchObject({
      name: 'greet',
      inputs: { who: { required: true } },
    });
    const sessions = await ws.runJson<{ id: string }[]>(['sessions']);
    expect(sessions.map((s) => s.id)).toContain(id);
  });

  it('task list, show and history answer from the files alone: no daemon is started, and runs due since one last watched are counted', async () => {
    const ws = makeE2eWorkspace();
    const tasks = path.join(ws.home, 'tasks');
    mkdirSync(tasks);
    writeFileSync(path.join(tasks, 'hourly.yaml'), 'prompt: "tick"\nschedule: "0 * * * *"\n');
    // A daemon watched the schedules until three hours ago (task-runner.ts writes this file).
    const paths = nifflerPaths(ws.repo, ws.env);
    const runs = path.join(paths.home, 'task-runs', paths.key);
    mkdirSync(runs, { recursive: true });
    const until = new Date(Date.now() - 3 * 3_600_000).toISOString();
    writeFileSync(path.join(runs, 'watched.json'), JSON.stringify({ until }));

    const [task] = await ws.runJson<{ name: string; next?: string; missed?: number }[]>([
      'task',
      'list',
    ]);
    expect(task).toMatchObject({ name: 'hourly', schedule: '0 * * * *' });
    expect(Date.parse(task!.next!)).toBeGreaterThan(Date.now());
    expect(task!.missed).toBeGreaterThanOrEqual(2);
    const list = await ws.run(['task', 'list']);
    expect(list.stderr).toContain('hourly: ');
    expect(list.stderr).toContain('scheduled run(s) missed while no daemon ran; not run now');
    expect(await ws.runJson(['task', 'history', 'hourly'])).toEqual([]);
    expect(await ws.runJson(['task', 'show', 'hourly'])).toMatchObject({ prompt: 'tick' });
    expect(existsSync(paths.socket)).toBe(false);

    // A daemon killed -9 leaves its socket and its pid file behind: no daemon runs, and the runs
    // due are counted all the same.
    mkdirSync(path.dirname(paths.socket), { recursive: true });
    writeFileSync(paths.socket, '');
    // The pid of a process that has exited.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(paths.pidFile, `${dead} 1\n`);
    const [after] = await ws.runJson<{ missed?: number }[]>(['task', 'list']);
    expect(after!.missed).toBe(task!.missed);
  });
});
