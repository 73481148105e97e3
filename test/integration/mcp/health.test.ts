import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { isAlive, ready, startHost } from './helpers.ts';

describe('health: crashes, restarts, hangs, orphans', () => {
  it('fails a call in flight when the server exits, then restarts it', async () => {
    const { host } = await startHost([fixtureSpec('crash')]);
    onTestFinished(() => host.close());
    const first = await ready(host, 'crash');
    const result = await host.callTool('crash__crash', { code: 1 });
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'server-crashed',
        message: 'server "crash" exited with code 1 during tools/call; restarting',
      },
    });
    const again = await host.waitForStatus('crash', (s) => s.state === 'ready' && s.restarts === 1);
    expect(again.pid).not.toBe(first.pid);
    expect(again.lastError?.message).toBe('server "crash" exited with code 1');
    expect(await host.callTool('crash__ok', {})).toMatchObject({ ok: true, output: 'fine' });
  });

  it('gives up after maxFailures and stays failed until started by hand', async () => {
    const { host } = await startHost([fixtureSpec('exit-at-start')], {
      health: { maxFailures: 3 },
    });
    onTestFinished(() => host.close());
    const states: string[] = [];
    host.on((e) => e.type === 'status' && states.push(e.status.state));
    const failed = await host.waitForStatus('exit-at-start', (s) => s.state === 'failed');
    expect(failed.restarts).toBe(2);
    expect(failed.lastError?.message).toBe(
      'server "exit-at-start" exited with code 3 during start-up: fatal: EXAMPLE_TOKEN is not set',
    );
    expect(states).not.toContain('ready');
    const result = await host.callTool('exit-at-start__anything', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'not-found' } });
    // By hand: the failure count starts over, so it tries again (and fails again).
    const retried = await host.startServer('exit-at-start');
    expect(['starting', 'failed']).toContain(retried.state);
    expect(retried.restarts).toBeGreaterThanOrEqual(2);
  });

  it('keeps the credentials a dying server quotes out of its last error', async () => {
    const secret = 'p"ss\\word-1234';
    const { host } = await startHost(
      [fixtureSpec('exit-at-start', { env: { FIXTURE_SECRET: secret } })],
      { health: { maxFailures: 1 } },
    );
    onTestFinished(() => host.close());
    const failed = await host.waitForStatus('exit-at-start', (s) => s.state === 'failed');
    expect(failed.lastError?.message).toBe(
      'server "exit-at-start" exited with code 3 during start-up: fatal: login refused for key ********',
    );
    expect(readFileSync(failed.logFile, 'utf8')).not.toContain('word-1234');
  });

  it('restarts a server that stops answering pings', async () => {
    const { host } = await startHost([fixtureSpec('hang')], {
      health: { pingIntervalMs: 200, pingTimeoutMs: 300 },
    });
    onTestFinished(() => host.close());
    const first = await ready(host, 'hang');
    const frozen = host.callTool('hang__freeze', {});
    const result = await frozen;
    expect(result).toMatchObject({ ok: false, error: { code: 'server-crashed' } });
    expect(!result.ok && result.error.message).toContain(
      'server "hang" stopped answering (no reply to ping within 0.3 s) during tools/call; restarting',
    );
    const again = await host.waitForStatus('hang', (s) => s.state === 'ready' && s.restarts === 1);
    expect(again.pid).not.toBe(first.pid);
    expect(isAlive(first.pid!)).toBe(false);
  });

  it('gives up on a server that does not finish starting within startupTimeout', async () => {
    const { host } = await startHost(
      [fixtureSpec('hang', { env: { HANG_AT_START: '1' }, startupTimeoutMs: 500 })],
      {
        health: { maxFailures: 1 },
      },
    );
    onTestFinished(() => host.close());
    const failed = await host.waitForStatus('hang', (s) => s.state === 'failed');
    expect(failed.lastError?.message).toBe(
      'server "hang" did not start within 0.5 s (startupTimeout)',
    );
    expect(failed.pid).toBeNull();
  });

  it('ends the whole process group on stop, and on close', async () => {
    const { host } = await startHost([
      fixtureSpec('echo'),
      fixtureSpec('echo', { name: 'echo2', displayName: 'echo2' }),
    ]);
    const one = await ready(host, 'echo');
    const two = await ready(host, 'echo2');
    const grandchild = Number((await host.callTool('echo__spawn_child', {})).output);
    const grandchild2 = Number((await host.callTool('echo2__spawn_child', {})).output);
    expect(isAlive(grandchild)).toBe(true);
    const stopped = await host.stopServer('echo');
    expect(stopped).toMatchObject({ state: 'stopped', pid: null });
    expect(isAlive(one.pid!)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
    expect(await host.callTool('echo__say', { text: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    });
    await host.close();
    expect(isAlive(two.pid!)).toBe(false);
    expect(isAlive(grandchild2)).toBe(false);
  });

  it('kills the servers of a worker that dies, and respawns the worker', async () => {
    const { host } = await startHost([fixtureSpec('echo')]);
    onTestFinished(() => host.close());
    const first = await ready(host, 'echo');
    const exited = new Promise((resolve) => host.on((e) => e.type === 'worker-exit' && resolve(e)));
    await (host as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    expect(await exited).toMatchObject({ restarting: true, error: { code: 'worker-exited' } });
    const again = await host.waitForStatus(
      'echo',
      (s) => s.state === 'ready' && s.pid !== first.pid,
    );
    expect(isAlive(-first.pid!)).toBe(false);
    expect(again.pid).toBeGreaterThan(0);
    expect(await host.callTool('echo__say', { text: 'back' })).toMatchObject({
      ok: true,
      output: 'back',
    });
  });

  it('logs non-protocol stdout as a warning and keeps working', async () => {
    const { host } = await startHost([fixtureSpec('noisy')]);
    onTestFinished(() => host.close());
    const status = await ready(host, 'noisy');
    expect(await host.callTool('noisy__chatty', {})).toMatchObject({
      ok: true,
      output: 'still works',
    });
    const log = readFileSync(status.logFile, 'utf8');
    expect(log).toContain(
      '[warning] ignored non-protocol output on stdout: Welcome to noisy server v1!',
    );
    expect(log).toContain('[warning] ignored non-protocol output on stdout: {"not":"json-rpc"}');
    expect(log).toContain(
      '[warning] ignored non-protocol output on stdout: debug: handling chatty',
    );
  });

  it('answers resources/read and prompts/get on a stopped server with how to start it', async () => {
    const { host } = await startHost([fixtureSpec('echo')]);
    onTestFinished(() => host.close());
    await ready(host, 'echo');
    await host.stopServer('echo');
    const unavailable = {
      ok: false,
      error: {
        code: 'server-unavailable',
        message: 'server "echo" is stopped; start it with niffler mcp start echo',
      },
    };
    expect(await host.readResource('echo', 'mem://note')).toEqual(unavailable);
    expect(await host.getPrompt('echo', 'greet', { who: 'Ann' })).toEqual(unavailable);
  });

  it('saves output over the cap to a file and returns a preview with its path', async () => {
    const { host } = await startHost([fixtureSpec('huge')], { maxOutputChars: 1_000 });
    onTestFinished(() => host.close());
    await ready(host, 'huge');
    const result = await host.callTool('huge__huge', { lines: 20_000 });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.savedTo).toBeDefined();
    const saved = readFileSync(result.savedTo!, 'utf8');
    expect(saved.split('\n')).toHaveLength(20_000);
    expect(saved.endsWith('line 20000')).toBe(true);
    expect(result.output.startsWith('line 1\nline 2\n')).toBe(true);
    expect(result.output).toContain(`the whole output is saved in ${result.savedTo}`);
    expect(result.output.length).toBeLessThan(1_200);
  });

  it('writes a result of megabytes to its file as it arrives; one file per call, whole', async () => {
    const { host, data } = await startHost([fixtureSpec('huge')], { maxOutputChars: 1_000 });
    onTestFinished(() => host.close());
    await ready(host, 'huge');
    const lines = (n: number, prefix = '') =>
      Array.from({ length: n }, (_, i) => `${prefix}line ${i + 1}`).join('\n');
    const one = await host.callTool('huge__huge', { lines: 200_000 });
    expect(one).toMatchObject({ ok: true, savedTo: expect.stringContaining('huge__huge-') });
    if (!one.ok) return;
    expect(readFileSync(one.savedTo!, 'utf8')).toBe(lines(200_000));
    expect(one.output).toBe(
      `${lines(200_000).slice(0, 1_000)}\n\n[output cut at 1000 of ${lines(200_000).length} characters; the whole output is saved in ${one.savedTo}; page it with read_file offset/limit]`,
    );
    const two = await host.callTool('huge__huge', { lines: 150_000, blocks: 2 });
    if (!two.ok) throw new Error(two.error.message);
    expect(readFileSync(two.savedTo!, 'utf8')).toBe(
      `${lines(150_000)}\n${lines(150_000, 'block 2 ')}`,
    );
    expect(readdirSync(data.outputsDir).sort()).toEqual(
      [one.savedTo!, two.savedTo!].map((f) => path.basename(f)).sort(),
    );
  });
});
