import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../../src/main/extensions/workspace-config.ts';
import type { EngineClient } from '../../../src/main/daemon/client.ts';
import { readTranscript } from '../../../src/main/engine/transcript.ts';
import { TaskRunner } from '../../../src/main/extensions/task-runner.ts';
import { silentLogger } from '../../../src/main/log.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import type { TaskRun } from '../../../src/main/protocol.ts';
import { testEnv } from '../../fixtures/env.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { startHarness } from './harness.ts';

const lastUser = (request: RecordedRequest): string =>
  (request.body.messages as { role: string; content: string }[])
    .filter((m) => m.role === 'user')
    .at(-1)?.content ?? '';

/** Resolves with the next `task/ran` of `task`; fails after `ms`. */
const nextRun = (client: EngineClient, task: string, ms: number) =>
  new Promise<TaskRun>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no run of ${task} within ${ms} ms`)), ms);
    const off = client.onNotification('task/ran', (run) => {
      if (run.task !== task) return;
      clearTimeout(timer);
      off();
      resolve(run);
    });
  });

describe('tasks', () => {
  it('run from task/run in the daemon with inputs, never ask (a write is denied and reported), and leave a transcript and history', async () => {
    const h = await startHarness('socket', {
      mcp: '  {}\n',
      llm: {
        route: (r) =>
          lastUser(r).startsWith('Summarize') &&
          !(r.body.messages as { role: string }[]).some((m) => m.role === 'tool')
            ? reply().tool('write_file', { path: 'out.md', content: 'x' })
            : undefined,
      },
    });
    h.file(
      '.niffler/tasks/summary.yaml',
      'description: a summary of the day\nagent: plan\ninputs:\n  topic: { required: true }\n  tone: { default: dry }\nprompt: "Summarize {{topic}} in a {{tone}} tone"\n',
    );
    h.file('.niffler/tasks/bad.yaml', 'prompt: x\nschedule: "61 * * * *"\n');
    const { trustRepo } = await import('./trust-helper.ts');
    await trustRepo(h);
    const problems = (await h.client.request('extensions/list', {})).problems.join('\n');
    expect(problems).toContain(
      'bad.yaml:2 schedule: "61 * * * *" is not a cron schedule: Invalid value for minute: 61',
    );
    h.llm.queue(reply().text('a dry summary'));
    // The route answers the first request with a write; this reply comes after it.
    const ran = nextRun(h.client, 'summary', 20_000);
    const { sessionId, summary } = await h.client.request('task/run', {
      name: 'summary',
      inputs: { topic: 'the logs' },
    });
    expect(summary).toMatchObject({ outcome: 'answered', denied: ['write_file'] });
    expect(await ran).toMatchObject({ trigger: 'manual', outcome: 'answered', sessionId });
    const env = testEnv({ HOME: path.dirname(h.root), NIFFLER_HOME: h.home });
    const transcript = readTranscript(nifflerPaths(h.root, env).sessionsDir, sessionId);
    expect(transcript.entries[0]).toMatchObject({ type: 'session', task: 'summary' });
    expect(transcript.messages[0]).toMatchObject({ content: 'Summarize the logs in a dry tone' });
    const history = await h.client.request('task/history', { name: 'summary' });
    expect(history).toEqual([
      expect.objectContaining({ outcome: 'answered', denied: ['write_file'] }),
    ]);
    await expect(h.client.request('task/run', { name: 'summary' })).rejects.toThrow(
      'task summary needs --input topic=…',
    );
  });

  it(
    'runs on its cron schedule in the daemon (every minute; awaited by its event) and the daemon says so',
    { timeout: 100_000 },
    async () => {
      const h = await startHarness('socket', { mcp: '  {}\n' });
      mkdirSync(path.join(h.home, 'tasks'));
      writeFileSync(
        path.join(h.home, 'tasks', 'tick.yaml'),
        'schedule: "* * * * *"\nprompt: tick\n',
      );
      h.llm.queue(reply().text('tock'));
      await h.client.request('config/reload', {});
      const status = await h.client.request('daemon/status', {});
      expect(status.schedules).toEqual([
        expect.objectContaining({ task: 'tick', schedule: '* * * * *', next: expect.any(String) }),
      ]);
      const run = await nextRun(h.client, 'tick', 75_000);
      expect(run).toMatchObject({ trigger: 'schedule', outcome: 'answered' });
      const env = testEnv({ HOME: path.dirname(h.root), NIFFLER_HOME: h.home });
      expect(
        readTranscript(nifflerPaths(h.root, env).sessionsDir, run.sessionId!).messages,
      ).toEqual([
        expect.objectContaining({ role: 'user', content: 'tick' }),
        expect.objectContaining({ role: 'assistant', content: 'tock' }),
      ]);
    },
  );
});

describe('missed scheduled runs', () => {
  it('are reported in the history when the daemon starts, not run', async () => {
    const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-m-')));
    onTestFinished(() => rmSync(base, { recursive: true, force: true }));
    const root = path.join(base, 'repo');
    const home = path.join(base, 'h');
    mkdirSync(path.join(root, '.git'), { recursive: true });
    mkdirSync(path.join(home, 'tasks'), { recursive: true });
    writeFileSync(path.join(home, 'tasks', 'hourly.yaml'), 'schedule: "0 * * * *"\nprompt: x\n');
    const env = testEnv({ HOME: base, NIFFLER_HOME: home });
    const dir = path.join(home, 'task-runs', nifflerPaths(root, env).key);
    mkdirSync(dir, { recursive: true });
    const until = new Date(Date.now() - 3 * 3600_000 - 60_000).toISOString();
    writeFileSync(path.join(dir, 'watched.json'), JSON.stringify({ until }));
    const loaded = loadConfig({ root, env });
    if (!loaded.ok) throw loaded.error;
    const runs: TaskRun[] = [];
    const runner = new TaskRunner({
      dir,
      newSession: () => {
        throw new Error('no run expected');
      },
      loaded: () => loaded.value,
      onRun: (run) => runs.push(run),
      onActivity: () => {},
      log: silentLogger,
    });
    runner.schedule();
    onTestFinished(() => runner.close());
    expect(runs).toEqual([expect.objectContaining({ task: 'hourly', outcome: 'missed' })]);
    expect([3, 4]).toContain(runs[0]!.missed);
    expect(runner.history('hourly')).toEqual(runs);
    expect(runner.list()[0]).toMatchObject({ name: 'hourly', missed: runs[0]!.missed });
  });
});
