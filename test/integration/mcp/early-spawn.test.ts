import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { McpHost } from '../../../src/main/threads/mcp.ts';
import type { McpServerSpec, McpWorkerData } from '../../../src/workers/protocol/mcp.ts';
import { spawnEarly } from '../../../src/workers/mcp/early-spawn.ts';
import { ProcessTransport } from '../../../src/workers/mcp/process-transport.ts';
import { serverLaunch } from '../../../src/workers/mcp/server-launch.ts';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { waitForLines } from '../../unit/tools/repo.ts';
import { ready } from './helpers.ts';

// The MCP worker spawns the stdio servers it starts by itself before it loads the MCP client code
// (workers/mcp/early-spawn.ts); the transport then takes that very process over. A process
// spawned early must be the one the server runs as: never a second one beside it.

/** The echo fixture, launched through a shell that notes each launch's pid in `launches`. */
const counted = (name: string, launches: string, overrides: Partial<McpServerSpec> = {}) => {
  const echo = fixtureSpec('echo');
  return fixtureSpec('echo', {
    name,
    displayName: name,
    command: '/bin/sh',
    args: ['-c', 'echo $$ >> "$0"; exec "$@"', launches, echo.command!, ...echo.args!],
    ...overrides,
  });
};

const launchesOf = (file: string): number[] =>
  readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number);

const workspace = (servers: McpServerSpec[]): McpWorkerData => {
  const dir = mkdtempSync(path.join(tmpdir(), 'niffler-early-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const root = path.join(dir, 'repo');
  mkdirSync(root);
  return {
    servers,
    root,
    roots: [root],
    logsDir: path.join(dir, 'logs'),
    outputsDir: path.join(dir, 'outputs'),
    serversDir: path.join(dir, 'servers'),
    logLevel: 'debug',
    health: { initialDelayMs: 50, maxDelayMs: 400, killGraceMs: 1_000 },
  };
};

const pidCall = async (host: McpHost, server: string): Promise<number> => {
  const result = await host.callTool(`${server}__pid`, {});
  if (!result.ok) throw new Error(result.error.message);
  return Number((result.content ?? []).find((c) => c.type === 'text')?.text);
};

describe('servers spawned before the MCP client code loads', () => {
  it.each([
    ['booted ahead of its data (a cold daemon)', true],
    ['started with its data', false],
  ])('%s: each server runs as the one process spawned for it', async (_, boot) => {
    const data = workspace([]);
    const launches = path.join(data.root, '..', 'launches');
    data.servers = [counted('one', `${launches}-one`), counted('two', `${launches}-two`)];
    const host = await McpHost.start(data, {}, boot ? McpHost.boot() : undefined);
    onTestFinished(() => host.close());
    for (const name of ['one', 'two']) {
      const status = await ready(host, name);
      const spawned = launchesOf(`${launches}-${name}`);
      expect(spawned).toEqual([status.pid]);
      expect(await pidCall(host, name)).toBe(status.pid);
    }
    // Taken over like any other server process: its group recorded for a successor to reap.
    expect(readdirSync(data.serversDir!).length).toBe(2);
  });

  it('a server that exits at once fails as it always did, whether or not it was taken over', async () => {
    const data = workspace([]);
    data.health = { ...data.health, maxFailures: 2 };
    data.servers = [
      fixtureSpec('echo', {
        name: 'dies',
        displayName: 'dies',
        command: '/bin/sh',
        args: ['-c', 'echo "fatal: no token" >&2; exit 3'],
      }),
    ];
    const host = await McpHost.start(data, {}, McpHost.boot());
    onTestFinished(() => host.close());
    const failed = await host.waitForStatus('dies', (s) => s.state === 'failed');
    expect(failed.lastError?.message).toBe(
      'server "dies" exited with code 3 during start-up: fatal: no token',
    );
  });

  it('a server not started by the worker itself (autoStart off) is not spawned early', async () => {
    const data = workspace([]);
    const launches = path.join(data.root, '..', 'launches');
    data.servers = [counted('lazy', launches, { autoStart: false })];
    const host = await McpHost.start(data, {}, McpHost.boot());
    onTestFinished(() => host.close());
    expect((await host.status())[0]?.state).toBe('stopped');
    await host.startServer('lazy');
    const status = await ready(host, 'lazy');
    expect(launchesOf(launches)).toEqual([status.pid]);
  });

  it('the transport takes over the process spawned early for its very launch, and only that', async () => {
    const data = workspace([]);
    const launches = path.join(data.root, '..', 'launches');
    const spec = counted('one', launches);
    data.servers = [spec];
    spawnEarly(data);
    // Spawned before any transport exists.
    const early = Number((await waitForLines(launches, 1))[0]);
    const transportOf = (env: Record<string, string>) => {
      const launch = serverLaunch({ ...spec, command: spec.command! }, data.root, () => {});
      return new ProcessTransport({
        command: launch.file,
        args: launch.args,
        cwd: data.root,
        env: { ...launch.env, ...env },
        killGraceMs: 1_000,
        onStderr: () => {},
        onNoise: () => {},
      });
    };
    // Another launch (one more variable) gets a process of its own.
    const other = transportOf({ EXTRA: '1' });
    await other.start();
    onTestFinished(() => other.close());
    expect(other.pid).not.toBe(early);
    const same = transportOf({});
    await same.start();
    onTestFinished(() => same.close());
    expect(same.pid).toBe(early);
    // Taken over once: a second transport of the same launch spawns anew.
    const again = transportOf({});
    await again.start();
    onTestFinished(() => again.close());
    expect(again.pid).not.toBe(early);
    expect((await waitForLines(launches, 3)).map(Number).sort()).toEqual(
      [early, other.pid, again.pid].sort(),
    );
  });
});
