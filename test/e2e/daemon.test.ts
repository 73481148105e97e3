import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connectSocket } from '../../src/main/daemon/client.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import type { DaemonStatus, McpStatusResult } from '../../src/main/protocol.ts';
import { fixtureYaml } from './gateway.ts';
import { isAlive, makeE2eWorkspace, publishedServersYaml } from './workspace.ts';

type Running = DaemonStatus & { running: true };

describe('daemon and niffler mcp (built binary, real servers)', () => {
  it('the first mcp status starts the daemon, the second is served warm; mcp call echoes', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(publishedServersYaml(ws.data));
    expect(await ws.runJson<{ running: boolean }>(['daemon', 'status'])).toMatchObject({
      running: false,
    });

    // Starting the daemon says nothing on stderr off a terminal: no warning of Node's either.
    const started = await ws.run(['mcp', 'status', '--wait', '--json']);
    expect(started).toMatchObject({ exitCode: 0, stderr: '' });
    const first = JSON.parse(started.stdout) as McpStatusResult;
    expect(first.servers.map((s) => [s.name, s.state])).toEqual([
      ['everything', 'ready'],
      ['filesystem', 'ready'],
      ['memory', 'ready'],
    ]);
    const daemon = await ws.runJson<Running>(['daemon', 'status']);
    expect(daemon.running).toBe(true);

    const second = await ws.runJson<McpStatusResult>(['mcp', 'status']);
    expect(second.servers.map((s) => s.pid)).toEqual(first.servers.map((s) => s.pid));
    expect((await ws.runJson<Running>(['daemon', 'status'])).pid).toBe(daemon.pid);

    const table = await ws.run(['mcp', 'status']);
    expect(table.stdout).toMatch(
      /^NAME\s+STATE\s+PROTOCOL\s+PID\s+UPTIME\s+RESTARTS\s+TOOLS\s+CALLS\s+ERRORS\s+P50\s+P95\s+SANDBOX\s+LAST ERROR$/m,
    );
    expect(table.stdout).toMatch(/^everything\s+ready\s+2025-11-25\s+\d+/m);

    const echo = await ws.run([
      'mcp',
      'call',
      'everything',
      'echo',
      '--args',
      '{"message":"hello niffler"}',
    ]);
    expect(echo.exitCode).toBe(0);
    expect(echo.stdout).toContain('hello niffler');

    const tools = await ws.run(['mcp', 'tools', 'everything']);
    expect(tools.stdout).toContain('everything__echo');

    const long = await ws.run([
      'mcp',
      'call',
      'everything',
      'trigger-long-running-operation',
      '--args',
      '{"duration":0.3,"steps":3}',
    ]);
    expect(long.exitCode).toBe(0);
    expect(long.stderr).toBe('1/3\n2/3\n3/3');
    expect(long.stdout).toContain('Long running operation completed');

    const logs = await ws.run(['mcp', 'logs', 'everything']);
    expect(logs.exitCode).toBe(0);
    expect(logs.stdout).toMatch(/\[stderr\] Starting default \(STDIO\) server/);
  });

  it('two front-ends starting at once share one daemon', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(publishedServersYaml(ws.data));
    const [a, b] = await Promise.all([
      ws.runJson<McpStatusResult>(['mcp', 'status', '--wait']),
      ws.runJson<McpStatusResult>(['mcp', 'status', '--wait']),
    ]);
    expect(a.servers.map((s) => s.pid)).toEqual(b.servers.map((s) => s.pid));
  });

  it('after kill -9 of the daemon, the next command brings it back cleanly', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(publishedServersYaml(ws.data));
    await ws.runJson(['mcp', 'status', '--wait']);
    const { pid } = await ws.runJson<Running>(['daemon', 'status']);
    process.kill(pid, 'SIGKILL');
    const after = await ws.runJson<McpStatusResult>(['mcp', 'status', '--wait']);
    expect(after.servers.every((s) => s.state === 'ready')).toBe(true);
    const again = await ws.runJson<Running>(['daemon', 'status']);
    expect(again.pid).not.toBe(pid);
  });

  it('mcp stop and daemon stop leave no child process', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(publishedServersYaml(ws.data));
    const status = await ws.runJson<McpStatusResult>(['mcp', 'status', '--wait']);
    const pids = Object.fromEntries(status.servers.map((s) => [s.name, s.pid!]));
    expect(Object.values(pids).every(isAlive)).toBe(true);

    const stopped = await ws.run(['mcp', 'stop', 'memory']);
    expect(stopped.stdout).toContain('stopped memory: stopped');
    expect(isAlive(pids['memory']!)).toBe(false);

    const { pid } = await ws.runJson<Running>(['daemon', 'status']);
    expect((await ws.run(['daemon', 'stop'])).stdout).toContain(`stopped the daemon (pid ${pid})`);
    expect(isAlive(pid)).toBe(false);
    expect(isAlive(pids['everything']!)).toBe(false);
    expect(isAlive(pids['filesystem']!)).toBe(false);
  });

  it('a broken config edit keeps the last good config and mcp status shows the error', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(publishedServersYaml(ws.data));
    const before = await ws.runJson<McpStatusResult>(['mcp', 'status', '--wait']);
    // Attached before the edit (a round trip proves the daemon has registered this client), so
    // the daemon's config/changed notification for the failed reload cannot be missed.
    const client = await connectSocket(nifflerPaths(ws.repo, ws.env).socket);
    let after: McpStatusResult;
    try {
      await client.request('daemon/status', {});
      const failed = new Promise<void>((resolve) =>
        client.onNotification('config/changed', (change) => {
          if (!change.ok) resolve();
        }),
      );
      ws.writeGlobal(publishedServersYaml(ws.data) + '  broken: [\n');
      await failed;
      after = await ws.runJson<McpStatusResult>(['mcp', 'status']);
    } finally {
      client.close();
    }
    expect(after.configError).toMatch(/config\.yaml:\d+: /);
    expect(after.servers.map((s) => [s.name, s.state, s.pid])).toEqual(
      before.servers.map((s) => [s.name, s.state, s.pid]),
    );
  });

  it('untrusted repo servers are listed as untrusted and never spawned', async () => {
    const ws = makeE2eWorkspace();
    ws.writeRepo(publishedServersYaml(ws.data));
    const list = await ws.run(['mcp', 'list']);
    expect(list.stdout).toMatch(/^everything\s+stdio\s+yes\s+untrusted/m);
    const status = await ws.runJson<McpStatusResult>(['mcp', 'status', '--wait']);
    expect(status.servers.map((s) => [s.state, s.pid])).toEqual([
      ['untrusted', null],
      ['untrusted', null],
      ['untrusted', null],
    ]);
    const call = await ws.run(['mcp', 'call', 'everything', 'echo', '--args', '{"message":"x"}']);
    expect(call.exitCode).toBe(1);
    expect(call.stderr).toContain('server "everything" is untrusted');
    expect(call.stderr).toContain('niffler trust');
  });

  it('mcp add and remove edit the YAML keeping comments', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal('# my servers\nmcpServers:\n  # keep me\n  a:\n    command: a\n');
    const added = await ws.run([
      'mcp',
      'add',
      'b',
      '--scope',
      'global',
      '--env',
      'K=v',
      '--',
      'node',
      'server.js',
      '--flag',
    ]);
    expect(added.exitCode).toBe(0);
    const listed = await ws.runJson<{ name: string; target: string }[]>(['mcp', 'list']);
    expect(listed.map((s) => [s.name, s.target])).toEqual([
      ['a', 'a'],
      ['b', 'node server.js --flag'],
    ]);
    await ws.run(['mcp', 'remove', 'a', '--scope', 'global']);
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(`${ws.home}/config.yaml`, 'utf8');
    expect(text).toContain('# my servers');
    expect(text).not.toContain('command: a\n');
    const missing = await ws.run(['mcp', 'remove', 'zzz']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('has no server "zzz"');
  });
});

describe('the daemon process', () => {
  it('runs with two malloc arenas, which its config, tools and servers do not inherit', async () => {
    const ws = makeE2eWorkspace();
    const names = ['MALLOC_ARENA_MAX', 'NIFFLER_DAEMON_ARENA'];
    ws.writeGlobal(
      `mcpServers:\n${fixtureYaml(
        'echo',
        'echo',
        `    env: { SEEN_ARENA: "\${MALLOC_ARENA_MAX:-unset}", SEEN_MARK: "\${NIFFLER_DAEMON_ARENA:-unset}" }\n`,
      )}`,
    );
    await ws.run(['mcp', 'status', '--wait']);
    const { pid } = await ws.runJson<Running>(['daemon', 'status']);
    // The allocator read it as the process started (the kernel's copy of its first environment).
    expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).toContain(
      'MALLOC_ARENA_MAX=2',
    );
    // Its config expanded without it, and a server's environment holds none of it.
    const call = await ws.run([
      'mcp',
      'call',
      'echo',
      'env',
      '--args',
      JSON.stringify({ names: ['SEEN_ARENA', 'SEEN_MARK', ...names] }),
    ]);
    expect(call.exitCode, call.stderr).toBe(0);
    expect(call.stdout).toContain(
      JSON.stringify({
        SEEN_ARENA: 'unset',
        SEEN_MARK: 'unset',
        MALLOC_ARENA_MAX: null,
        NIFFLER_DAEMON_ARENA: null,
      }),
    );
  });
});
