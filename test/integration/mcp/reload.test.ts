import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { ready, startHost, type TestHost } from './helpers.ts';

describe('config reload and gates', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startHost([
      fixtureSpec('echo'),
      fixtureSpec('echo', { name: 'keep', displayName: 'keep' }),
      fixtureSpec('echo', { name: 'gone', displayName: 'gone' }),
      fixtureSpec('echo', { name: 'off', displayName: 'off', gate: 'disabled' }),
      fixtureSpec('echo', { name: 'repo', displayName: 'repo', gate: 'untrusted' }),
      fixtureSpec('echo', { name: 'lazy', displayName: 'lazy', autoStart: false }),
    ]);
    await Promise.all(['echo', 'keep', 'gone'].map((s) => ready(t.host, s)));
  });
  afterAll(() => t.host.close());

  it('does not start disabled, untrusted or non-auto-start servers', async () => {
    const states = Object.fromEntries((await t.host.status()).map((s) => [s.name, s.state]));
    expect(states).toMatchObject({ off: 'disabled', repo: 'untrusted', lazy: 'stopped' });
    await expect(t.host.startServer('repo')).rejects.toMatchObject({ code: 'untrusted' });
    await expect(t.host.startServer('off')).rejects.toMatchObject({ code: 'usage' });
    await expect(t.host.startServer('nope')).rejects.toMatchObject({ code: 'mcp-not-found' });
    expect(await t.host.callTool('repo__say', { text: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    });
    expect((await t.host.startServer('lazy')).state).toBe('ready');
  });

  it('restarts only servers whose definition changed', async () => {
    const before = Object.fromEntries((await t.host.status()).map((s) => [s.name, s]));
    const result = await t.host.updateServers([
      fixtureSpec('echo', { env: { CHANGED: '1' } }),
      fixtureSpec('echo', { name: 'keep', displayName: 'keep' }),
      fixtureSpec('echo', { name: 'new', displayName: 'new' }),
      fixtureSpec('echo', { name: 'off', displayName: 'off', gate: 'disabled' }),
      fixtureSpec('echo', { name: 'repo', displayName: 'repo', gate: 'startable' }),
      fixtureSpec('echo', { name: 'lazy', displayName: 'lazy', autoStart: false }),
    ]);
    expect(result).toEqual({
      started: ['new'],
      stopped: ['gone'],
      restarted: ['echo', 'repo'],
      unchanged: ['keep', 'off', 'lazy'],
    });
    await Promise.all(
      ['echo', 'new', 'repo'].map((s) =>
        t.host.waitForStatus(s, (x) => x.state === 'ready' && x.pid !== before[s]?.pid),
      ),
    );
    const after = Object.fromEntries((await t.host.status()).map((s) => [s.name, s]));
    expect(after['keep']?.pid).toBe(before['keep']?.pid);
    expect(after['echo']?.pid).not.toBe(before['echo']?.pid);
    expect(after['gone']).toBeUndefined();
    expect(
      JSON.parse((await t.host.callTool('echo__env', { names: ['CHANGED'] })).output!),
    ).toEqual({ CHANGED: '1' });
    expect(await t.host.callTool('gone__say', { text: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    });
  });

  it('restarts a server by hand', async () => {
    const before = await ready(t.host, 'keep');
    const after = await t.host.restartServer('keep');
    expect(after).toMatchObject({ state: 'ready', restarts: before.restarts + 1 });
    expect(after.pid).not.toBe(before.pid);
  });
});
