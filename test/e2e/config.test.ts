import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testEnv } from '../fixtures/env.ts';
import { makeWorkspace } from '../unit/config/helpers.ts';
import { niffler } from './cli.ts';

describe('niffler config, init, trust (built binary)', () => {
  it('config show --origin names the file and line of each value', async () => {
    const ws = makeWorkspace();
    ws.writeGlobal(
      'model: g\nmodels:\n  g: { provider: openai, model: gpt, apiKeyEnv: KEY }\nagent:\n  maxSteps: 9\n',
    );
    ws.writeRepo('agent:\n  maxSteps: 12\ndaemon:\n  idleMinutes: 3\n');
    const { stdout, exitCode } = await niffler(['config', 'show', '--origin'], {
      cwd: path.join(ws.repo),
      env: testEnv(ws.env),
    });
    expect(exitCode).toBe(0);
    expect(stdout).toContain('model: g # ~/home/config.yaml:1');
    expect(stdout).toContain('maxSteps: 12 # ~/repo/.niffler/config.yaml:2');
    expect(stdout).toContain('idleMinutes: 3 # ~/repo/.niffler/config.yaml:4');
    expect(stdout).toContain('apiKeyEnv: KEY # ~/home/config.yaml:3');
    expect(stdout).toContain('timeout: 60 # default');
  });

  it('config show redacts secrets and --json prints JSON', async () => {
    const ws = makeWorkspace();
    ws.writeGlobal(
      'mcpServers:\n  gh:\n    url: https://x.test/mcp\n    headers:\n      Authorization: Bearer ${TOKEN}\n',
    );
    const result = await niffler(['config', 'show', '--json'], {
      cwd: ws.repo,
      env: testEnv({ ...ws.env, TOKEN: 'tok-123456' }),
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).not.toContain('tok-123456');
    expect(JSON.parse(result.stdout).config.mcpServers.gh.headers.Authorization).toBe('********');
  });

  it('a broken config exits 1 with file:line and key', async () => {
    const ws = makeWorkspace();
    ws.writeRepo('mcpServers:\n  s:\n    command: 42\n');
    const { stderr, exitCode } = await niffler(['config', 'show'], {
      cwd: ws.repo,
      env: testEnv({ ...ws.env, NO_COLOR: '1' }),
    });
    expect(exitCode).toBe(1);
    expect(stderr.trim()).toBe(
      'niffler: ~/repo/.niffler/config.yaml:3 mcpServers.s.command: expected a string, got 42',
    );
  });

  it('config path lists the files in precedence order', async () => {
    const ws = makeWorkspace();
    ws.writeRepo('model: local\n');
    const { stdout } = await niffler(['config', 'path', '--json'], {
      cwd: ws.repo,
      env: testEnv(ws.env),
    });
    const parsed = JSON.parse(stdout);
    expect(parsed.root).toBe(ws.repo);
    // Highest first; the repository's Claude Code settings carry hooks only (every layer's run).
    expect(parsed.files.map((f: { kind: string }) => f.kind)).toEqual([
      'claude-local',
      'claude-project',
      'repo',
      'mcp-json',
      'opencode-project',
      'gemini-project',
      'codex-project',
      'global',
      'opencode-user',
      'gemini-user',
      'codex-user',
    ]);
    expect(parsed.files.find((f: { kind: string }) => f.kind === 'repo').exists).toBe(true);
  });

  it('init writes .niffler/ once and never overwrites; trust records the servers', async () => {
    const ws = makeWorkspace();
    const first = await niffler(['init'], { cwd: ws.repo, env: testEnv(ws.env) });
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toContain('created ~/repo/.niffler/config.yaml');
    const second = await niffler(['init'], { cwd: ws.repo, env: testEnv(ws.env) });
    expect(second.stdout).toContain(
      'kept    ~/repo/.niffler/config.yaml (exists; not overwritten)',
    );

    const before = JSON.parse(
      (await niffler(['config', 'show', '--json'], { cwd: ws.repo, env: testEnv(ws.env) })).stdout,
    );
    expect(before.warnings.join('\n')).toContain(
      'this repository is not trusted: its servers filesystem, memory are not started',
    );
    const trusted = await niffler(['trust'], { cwd: ws.repo, env: testEnv(ws.env) });
    expect(trusted.stdout).toContain(
      'server filesystem: npx -y @modelcontextprotocol/server-filesystem .',
    );
    const after = JSON.parse(
      (await niffler(['config', 'show', '--json'], { cwd: ws.repo, env: testEnv(ws.env) })).stdout,
    );
    expect(after.warnings).toEqual([]);
  });

  it('global options work after the subcommand too: --set, -m, -C and --no-daemon', async () => {
    const ws = makeWorkspace();
    const run = (args: string[], cwd = ws.repo) => niffler(args, { cwd, env: testEnv(ws.env) });
    const show = async (args: string[], cwd?: string) => {
      const result = await run(args, cwd);
      expect(result.stderr).toBe('');
      return JSON.parse(result.stdout) as {
        config: { model: string; agent: Record<string, unknown> };
      };
    };
    expect(
      (await show(['config', 'show', '--set', 'agent.maxSteps=3', '--json'])).config.agent,
    ).toMatchObject({ maxSteps: 3 });
    // Before and after add up.
    expect(
      (
        await show([
          '--set',
          'agent.maxSteps=4',
          'config',
          'show',
          '--json',
          '--set',
          'agent.git=false',
        ])
      ).config.agent,
    ).toMatchObject({ maxSteps: 4, git: false });
    expect((await show(['config', 'show', '--json', '-m', 'local'])).config.model).toBe('local');
    // -C after the subcommand: the repository's own config is read from there.
    ws.writeRepo('agent:\n  maxSteps: 12\n');
    expect(
      (await show(['config', 'show', '--json', '-C', ws.repo], path.dirname(ws.repo))).config.agent,
    ).toMatchObject({ maxSteps: 12 });
    // --no-daemon after the subcommand: answered in this process, no daemon left behind.
    const sessions = await run(['sessions', '--json', '--no-daemon']);
    expect(sessions).toMatchObject({ exitCode: 0, stdout: '[]' });
    expect((await run(['daemon', 'status', '--json'])).stdout).toContain('"running": false');
    expect((await run(['config', 'show', '--help'])).stdout).toContain('--set <key=value>');
  });

  it('--help works on every command and --version prints the version', async () => {
    const ws = makeWorkspace();
    for (const args of [
      ['--help'],
      ['config', '--help'],
      ['config', 'show', '--help'],
      ['init', '--help'],
      ['trust', '--help'],
    ]) {
      const { exitCode, stdout } = await niffler(args, { cwd: ws.repo, env: testEnv(ws.env) });
      expect(exitCode).toBe(0);
      expect(stdout).toContain('Usage: niffler');
    }
    expect((await niffler(['--version'], { cwd: ws.repo, env: testEnv(ws.env) })).stdout).toMatch(
      /^\d+\.\d+\.\d+$/,
    );
    const bad = await niffler(['config', 'nope'], { cwd: ws.repo, env: testEnv(ws.env) });
    expect(bad.exitCode).toBe(2);
  });
});
