import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitUntil } from '../../src/main/daemon/lifecycle.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import type { DaemonStatus, McpStatusResult } from '../../src/main/protocol.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { CLI, niffler } from './cli.ts';
import { daemonsOf, killAllWith, processesWith } from './processes.ts';
import { isAlive, makeE2eWorkspace } from './workspace.ts';

// Faults caused from outside, with real processes: what "What was seen" in issue 18 lists.

const tsx = import.meta.resolve('tsx');
const fixture = (name: string) => path.resolve('test/fixtures/mcp', `${name}.ts`);

/** YAML for a stdio fixture server, with `extra` lines of its entry (indented 4). */
const fixtureYaml = (name: string, file: string, args: string[] = [], extra = '') =>
  `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify(['--import', tsx, fixture(file), ...args])}\n${extra}`;

/** A workspace whose model is a strict fake LLM (unpaired tool calls are a 400). */
const setup = async (servers: string, more = '') => {
  const ws = makeE2eWorkspace();
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  ws.writeGlobal(
    `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n${more}` +
      (servers ? `mcpServers:\n${servers}` : ''),
  );
  const run = (args: string[], timeoutMs = 60_000) =>
    niffler(args, { cwd: ws.repo, env: ws.env, timeoutMs });
  return { ws, llm, run };
};

const daemonPid = async (ws: ReturnType<typeof makeE2eWorkspace>) =>
  (await ws.runJson<DaemonStatus>(['daemon', 'status'])).pid;

describe('faults from outside (built binary, real processes)', () => {
  it('socket deleted under a running daemon: still exactly one daemon after 20 commands', async () => {
    const { ws, run } = await setup('');
    expect((await run(['mcp', 'status'])).exitCode).toBe(0);
    const [first, ...others] = daemonsOf(ws.repo);
    expect(others).toEqual([]);
    rmSync(nifflerPaths(ws.repo, ws.env).socket);
    for (let i = 0; i < 20; i++) {
      const result = await run(
        i % 2 ? ['mcp', 'status', '--json'] : ['daemon', 'status', '--json'],
      );
      expect(result.exitCode, result.stderr).toBe(0);
    }
    expect(daemonsOf(ws.repo).map((d) => d.pid)).toEqual([first!.pid]);
    expect(await daemonPid(ws)).toBe(first!.pid);
  });

  it('a SIGSTOPped daemon: -p and mcp status say it is not responding and how out; restart recovers', async () => {
    const { ws, llm, run } = await setup('');
    ws.env['NIFFLER_DAEMON_TIMEOUT'] = '2';
    expect((await run(['mcp', 'status'])).exitCode).toBe(0);
    const pid = await daemonPid(ws);
    process.kill(pid, 'SIGSTOP');
    onTestFinished(() => (isAlive(pid) ? void process.kill(pid, 'SIGCONT') : undefined));
    for (const args of [
      ['-p', 'hello'],
      ['mcp', 'status'],
    ]) {
      const result = await run(args, 30_000);
      expect(result.exitCode, args.join(' ')).toBe(1);
      expect(result.stderr).toContain(`daemon pid ${pid} is not responding`);
      expect(result.stderr).toContain('niffler daemon restart');
      expect(result.stderr).toContain('niffler daemon stop --force');
    }
    const restarted = await run(['daemon', 'restart'], 30_000);
    expect(restarted.exitCode, restarted.stderr).toBe(0);
    expect(isAlive(pid)).toBe(false);
    llm.queue(reply().text('back'));
    expect((await run(['-p', 'hello'])).stdout).toBe('back');
    expect(await daemonPid(ws)).not.toBe(pid);
  });

  it('a turn keeps its daemon alive by heartbeat: a slow model is waited for, a frozen daemon is not', async () => {
    const { ws, llm, run } = await setup('');
    ws.env['NIFFLER_DAEMON_TIMEOUT'] = '1.5';
    // The model says nothing for longer than the front-end's deadline.
    llm.queue(reply().pause(2_500).text('slow but fine'));
    const slow = await run(['-p', 'take your time']);
    expect(slow).toMatchObject({ exitCode: 0, stdout: 'slow but fine' });

    llm.queue(reply().hang());
    const stuck = run(['-p', 'and now?'], 30_000);
    await llm.waitForRequests(2);
    const pid = await daemonPid(ws);
    process.kill(pid, 'SIGSTOP');
    onTestFinished(() => (isAlive(pid) ? void process.kill(pid, 'SIGCONT') : undefined));
    const result = await stuck;
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(`daemon pid ${pid} is not responding`);
    expect((await run(['daemon', 'stop', '--force'], 30_000)).exitCode).toBe(0);
    expect(isAlive(pid)).toBe(false);
  });

  it('a server that ignores EOF, and kill -9 of the daemon: the next command leaves one copy, none of the old', async () => {
    const marker = `nf-eof-${randomBytes(4).toString('hex')}`;
    onTestFinished(() => killAllWith(marker));
    const { ws, run } = await setup(fixtureYaml('stubborn', 'ignore-eof', [marker]));
    const copies = () => ({
      servers: processesWith(`ignore-eof.ts ${marker}`).map((p) => p.pid),
      children: processesWith(`${marker}-child`).map((p) => p.pid),
    });
    await ws.runJson<McpStatusResult>(['mcp', 'status', '--wait']);
    const old = copies();
    expect(old.servers).toHaveLength(1);
    expect(old.children).toHaveLength(1);

    process.kill(await daemonPid(ws), 'SIGKILL');
    const after = await ws.runJson<McpStatusResult>(['mcp', 'status', '--wait']);
    expect(after.servers.map((s) => s.state)).toEqual(['ready']);
    expect([...old.servers, ...old.children].filter(isAlive)).toEqual([]);
    const now = copies();
    expect(now.servers).toHaveLength(1);
    expect(now.children).toHaveLength(1);
    expect(now.servers).toEqual([after.servers[0]!.pid]);
    expect((await run(['daemon', 'stop'])).exitCode).toBe(0);
    expect(copies()).toEqual({ servers: [], children: [] });
  });

  it('kill -9 of the daemon while a tool runs: --continue is accepted by the strict model', async () => {
    const { ws, llm, run } = await setup(
      fixtureYaml('slow', 'slow'),
      'tools:\n  policy:\n    "slow__*": allow\n',
    );
    llm.queue(reply().tool('slow__wait', {}));
    const first = execa(process.execPath, [CLI, '-p', 'wait for it'], {
      cwd: ws.repo,
      env: ws.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    // The assistant's tool call is on disk once its transcript line is.
    const sessions = nifflerPaths(ws.repo, ws.env).sessionsDir;
    const written = () => {
      const files = readdirSync(sessions, { withFileTypes: true }).filter((f) => f.isFile());
      return files.some((f) =>
        readFileSync(path.join(sessions, f.name), 'utf8').includes('toolCalls'),
      );
    };
    expect(
      await waitUntil(() => {
        try {
          return written();
        } catch {
          return false;
        }
      }, 20_000),
    ).toBe(true);
    process.kill(await daemonPid(ws), 'SIGKILL');
    expect((await first).exitCode).toBe(1);

    llm.queue(reply().text('carrying on'));
    const again = await run(['-p', '--continue', 'go on']);
    expect(again.stderr).toContain('not run: the session ended before this call finished');
    expect(again).toMatchObject({ exitCode: 0, stdout: 'carrying on' });
    const messages = llm.requests.at(-1)!.body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(messages[3]!.content).toContain('not run: the session ended before this call finished');
  });

  it('a server in a restart loop: -p answers with the other tools and names the missing server', async () => {
    const { ws, llm, run } = await setup(
      fixtureYaml('echo', 'echo') + fixtureYaml('broken', 'exit-at-start'),
      'mcp:\n  startupWait: 2\n',
    );
    // The echo server is up; the broken one is somewhere in its restart series.
    expect((await run(['mcp', 'call', 'echo', 'say', '--args', '{"text":"up"}'])).exitCode).toBe(0);
    llm.queue(reply().text('answered anyway'));
    const result = await run(['-p', 'hello']);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'answered anyway' });
    expect(result.stderr).toMatch(
      /server "broken" (is restarting \(attempt \d+\)|is still starting): its tools are not in this turn/,
    );
    const tools = (llm.requests[0]!.body.tools as { function: { name: string } }[]).map(
      (t) => t.function.name,
    );
    expect(tools).toContain('echo__say');
    expect(tools.filter((t) => t.startsWith('broken__'))).toEqual([]);
    void ws;
  });

  it('mcp start of a server that fails says so: exit 1 with its error; --no-wait returns at once', async () => {
    const { run } = await setup(
      fixtureYaml('broken', 'exit-at-start', [], '    autoStart: false\n'),
    );
    const result = await run(['mcp', 'start', 'broken']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('server "broken" exited with code 3 during start-up');
    expect(result.stderr).toContain('fatal: EXAMPLE_TOKEN is not set');
    const restarted = await run(['mcp', 'restart', 'broken']);
    expect(restarted.exitCode).toBe(1);
    expect(restarted.stderr).toContain('fatal: EXAMPLE_TOKEN is not set');
    const noWait = await run(['mcp', 'start', 'broken', '--no-wait']);
    expect(noWait.exitCode).toBe(0);
    expect(noWait.stdout).toMatch(/broken: starting/);
  });
});

/** Mounts a tmpfs at `dir` (root only); false where that cannot be done. */
const mountTmpfs = (dir: string, options: string): boolean => {
  if (process.getuid?.() !== 0) return false;
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Fills the file system of `dir` until it has no space left. */
const fill = (dir: string) => {
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (let i = 0; ; i++) writeFileSync(path.join(dir, 'filler'), chunk, { flag: 'a' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
};

describe('disk faults under the sessions directory (a tmpfs; root only)', () => {
  for (const [fault, options, errno] of [
    ['read-only', 'ro,size=1m', 'EROFS'],
    ['full', 'size=64k', 'ENOSPC'],
  ] as const)
    it(`${fault}: the answer is printed and the error names the file and ${errno}`, async (ctx) => {
      const { ws, llm, run } = await setup('');
      const sessions = path.join(ws.home, 'sessions');
      if (!mountTmpfs(sessions, options)) return ctx.skip();
      onTestFinished(async () => {
        await run(['daemon', 'stop']);
        execFileSync('umount', ['-l', sessions]);
      });
      if (fault === 'full') fill(sessions);
      llm.queue(reply().text('the answer'));
      const result = await run(['-p', 'hello']);
      expect(result.stdout).toBe('the answer');
      expect(result.stderr).toContain(errno);
      expect(result.stderr).toContain(nifflerPaths(ws.repo, ws.env).sessionsDir);
      expect(result.stderr).not.toContain('ENOENT');
    });
});
