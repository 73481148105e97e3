import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { NifflerError } from '../../../src/main/errors.ts';
import { RpcChannel } from '../../../src/main/threads/rpc.ts';
import { toServerSpec } from '../../../src/main/threads/mcp-spec.ts';
import type { ResolvedServer } from '../../../src/main/config/load.ts';

type Calls = {
  echo: { params: { text: string }; result: string };
  hang: { params: object; result: never };
};

describe('RpcChannel over a real MessageChannel', () => {
  const channel = new MessageChannel();
  afterEach(() => channel.port2.removeAllListeners('message'));
  const rpc = new RpcChannel<Calls>(channel.port1, 5_000);
  channel.port1.on('message', (m: { type: string }) => rpc.handle(m));
  channel.port1.unref();

  it('pairs replies by id and forwards progress', async () => {
    channel.port2.on('message', (m: { type: string; id: number; text?: string }) => {
      if (m.type !== 'echo') return;
      channel.port2.postMessage({ type: 'progress', id: m.id, progress: 1, total: 2 });
      channel.port2.postMessage({ type: 'result', id: m.id, value: m.text });
    });
    const progress: unknown[] = [];
    const [a, b] = await Promise.all([
      rpc.request('echo', { text: 'a' }, { onProgress: (p) => progress.push(p) }),
      rpc.request('echo', { text: 'b' }),
    ]);
    expect([a, b]).toEqual(['a', 'b']);
    expect(progress).toEqual([{ progress: 1, total: 2 }]);
  });

  it('rebuilds errors, cancels on abort and times out', async () => {
    let cancels = 0;
    let twoCancels!: () => void;
    const canceled = new Promise<void>((resolve) => (twoCancels = resolve));
    channel.port2.on('message', (m: { type: string; id: number }) => {
      if (m.type === 'cancel' && ++cancels === 2) twoCancels();
      if (m.type === 'echo')
        channel.port2.postMessage({
          type: 'error',
          id: m.id,
          error: { code: 'mcp-call', message: 'no' },
        });
    });
    await expect(rpc.request('echo', { text: 'x' })).rejects.toMatchObject({
      name: 'NifflerError',
      code: 'mcp-call',
      message: 'no',
    });
    const controller = new AbortController();
    const aborted = rpc.request('hang', {}, { signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'canceled' });
    await expect(rpc.request('hang', {}, { timeoutMs: 20 })).rejects.toMatchObject({
      code: 'timeout',
    });
    const pending = rpc.request('hang', {}, { timeoutMs: 0 });
    rpc.rejectAll(new NifflerError('worker-exited', 'gone'));
    await expect(pending).rejects.toMatchObject({ code: 'worker-exited' });
    expect(rpc.size).toBe(0);
    await canceled; // the aborted and the timed-out request were both canceled on the other side
  });
});

describe('RpcChannel messages', () => {
  it('posts each request as it is made, and a cancel after the request it cancels', async () => {
    const channel = new MessageChannel();
    onTestFinished(() => channel.port1.close());
    const rpc = new RpcChannel<Calls>(channel.port1);
    channel.port1.on('message', (m: { type: string }) => rpc.handle(m));
    const received: unknown[] = [];
    channel.port2.on('message', (m: { type: string; id: number; text?: string }) => {
      received.push(m);
      if (m.type === 'echo') channel.port2.postMessage({ type: 'result', id: m.id, value: m.text });
    });
    const both = await Promise.all([
      rpc.request('echo', { text: 'a' }),
      rpc.request('echo', { text: 'b' }),
    ]);
    const controller = new AbortController();
    const canceled = rpc.request('hang', {}, { signal: controller.signal });
    controller.abort();
    await expect(canceled).rejects.toMatchObject({ code: 'canceled' });
    await vi.waitFor(() => expect(received).toHaveLength(4));
    expect(both).toEqual(['a', 'b']);
    expect(received).toEqual([
      { type: 'echo', id: 1, text: 'a' },
      { type: 'echo', id: 2, text: 'b' },
      { type: 'hang', id: 3 },
      { type: 'cancel', id: 3 },
    ]);
  });
});

describe('toServerSpec', () => {
  const server = (over: Partial<ResolvedServer>): ResolvedServer => ({
    name: 'gh',
    displayName: 'GitHub',
    definition: { command: 'gh-mcp', args: ['--x'], env: { T: '1' }, includeTools: ['a'] },
    transport: 'stdio',
    source: { kind: 'global' },
    enabled: true,
    trust: 'yours',
    timeoutMs: 60_000,
    startupTimeoutMs: 30_000,
    maxConcurrency: 4,
    autoStart: true,
    ...over,
  });

  it.each([
    [{}, 'startable'],
    [{ trust: 'trusted' as const }, 'startable'],
    [{ trust: 'untrusted' as const }, 'untrusted'],
    [{ trust: 'changed' as const }, 'untrusted'],
    [{ enabled: false }, 'disabled'],
  ])('%j → gate %s', (over, gate) => {
    expect(toServerSpec(server(over))).toEqual({
      name: 'gh',
      displayName: 'GitHub',
      transport: 'stdio',
      command: 'gh-mcp',
      args: ['--x'],
      env: { T: '1' },
      timeoutMs: 60_000,
      startupTimeoutMs: 30_000,
      maxConcurrency: 4,
      autoStart: true,
      gate,
    });
  });

  const ctx = {
    sandboxDefault: false,
    root: '/work/repo',
    hide: ['/home/u/.niffler'],
    env: { HOME: '/home/u' },
  };
  const sandboxOf = (definition: Partial<ResolvedServer['definition']>, over = {}) =>
    toServerSpec(server({ definition: { command: 'x', ...definition } }), { ...ctx, ...over })
      .sandbox;

  it('resolves mcpServers.X.sandbox: write paths from the root and ~, the workspace readable', () => {
    expect(sandboxOf({ sandbox: { write: ['.', 'out', '~/.cache/x'], network: true } })).toEqual({
      write: ['/work/repo', '/work/repo/out', '/home/u/.cache/x'],
      read: ['/work/repo'],
      network: true,
      hide: ['/home/u/.niffler'],
    });
    expect(sandboxOf({ sandbox: true })).toMatchObject({ write: [], network: false });
    expect(sandboxOf({})).toBeUndefined();
  });

  it('mcp.sandboxDefault sandboxes every stdio server but those that say sandbox: false', () => {
    expect(sandboxOf({}, { sandboxDefault: true })).toMatchObject({ write: [], network: false });
    expect(sandboxOf({ sandbox: false }, { sandboxDefault: true })).toBeUndefined();
    const remote = toServerSpec(
      server({ definition: { url: 'https://x.test/mcp' }, transport: 'http' }),
      { ...ctx, sandboxDefault: true },
    );
    expect(remote.sandbox).toBeUndefined();
  });
});
