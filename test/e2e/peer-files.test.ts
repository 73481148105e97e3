import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.ts';
import { makeE2eWorkspace } from './workspace.ts';

// The files a Claude Code, Codex or Gemini CLI user already has, through the built binary and a
// real daemon: hooks from `.claude/settings.json` run as Claude Code runs them (its scripts,
// copied unchanged from anthropics/claude-code — see test/fixtures/peers/claude/README.md).

const PEERS = path.join(import.meta.dirname, '..', 'fixtures', 'peers');

const setup = async () => {
  const ws = makeE2eWorkspace();
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  ws.writeGlobal(
    `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: m\n`,
  );
  return { ws, llm };
};

/** What the model was sent as tool results, in order. */
const toolResults = (llm: FakeLlm): string[] =>
  llm.requests.flatMap((r) =>
    (r.body.messages as { role: string; content: unknown }[])
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content)),
  );

/**
 * A `.claude/settings.json` as Claude Code's hooks reference writes one: events niffler has no
 * moment for (Notification, PreCompact's sibling PostCompact, TeammateIdle), `statusMessage`,
 * `${CLAUDE_PROJECT_DIR}` in braces, a `direnv`-style SessionStart hook writing CLAUDE_ENV_FILE,
 * and Anthropic's example guards.
 */
const SETTINGS = {
  $schema: 'https://json.schemastore.org/claude-code-settings.json',
  permissions: { allow: ['Bash(npm run test:*)'], deny: ['Read(./secrets/**)'] },
  env: { DISABLE_TELEMETRY: '1' },
  hooks: {
    SessionStart: [
      {
        matcher: 'startup|resume',
        hooks: [
          {
            type: 'command',
            command: `echo 'export FROM_SESSION_START=direnv-ok' >> "$CLAUDE_ENV_FILE"`,
            statusMessage: 'Loading the project environment',
          },
        ],
      },
    ],
    PreToolUse: [
      {
        matcher: 'Edit|Write|MultiEdit',
        hooks: [
          {
            type: 'command',
            command: 'python3 "${CLAUDE_PROJECT_DIR}"/.claude/hooks/file_guard_example.py',
            statusMessage: 'Checking protected files',
          },
        ],
      },
      {
        matcher: 'Bash',
        hooks: [
          {
            type: 'command',
            command:
              'python3 ${CLAUDE_PROJECT_DIR}/.claude/hooks/bash_command_validator_example.py',
            timeout: 30,
          },
        ],
      },
    ],
    Notification: [
      { matcher: '', hooks: [{ type: 'command', command: 'notify-send "Claude Code" "Waiting"' }] },
    ],
    SubagentStop: [
      { hooks: [{ type: 'command', command: 'echo "${CLAUDE_PROJECT_DIR}" > subagent-stopped' }] },
    ],
    TeammateIdle: [{ hooks: [{ type: 'command', command: 'true' }] }],
  },
};

const writeClaudeSettings = (repo: string) => {
  mkdirSync(path.join(repo, '.claude', 'hooks'), { recursive: true });
  for (const script of ['file_guard_example.py', 'bash_command_validator_example.py'])
    copyFileSync(path.join(PEERS, 'claude', script), path.join(repo, '.claude', 'hooks', script));
  writeFileSync(
    path.join(repo, '.claude', 'settings.json'),
    JSON.stringify(SETTINGS, null, 2) + '\n',
  );
};

describe('a Claude Code user’s .claude/settings.json hooks (built binary)', () => {
  it('load with events niffler does not fire listed as notes; run only once trusted; guards see Claude Code’s names; CLAUDE_ENV_FILE reaches bash', async () => {
    const { ws, llm } = await setup();
    writeClaudeSettings(ws.repo);
    writeFileSync(path.join(ws.repo, '.env'), 'API=1\n');
    writeFileSync(path.join(ws.repo, 'notes.txt'), 'alpha\n');

    const check = await ws.run(['config', 'show']);
    expect(check.exitCode).toBe(0);
    expect(check.stderr).toMatch(
      /\.claude\/settings\.json:\d+ hooks\.Notification: not fired in niffler/,
    );
    expect(check.stderr).toMatch(
      /\.claude\/settings\.json:\d+ hooks\.TeammateIdle: not fired in niffler/,
    );
    expect(check.stderr).not.toMatch(/hooks\.SubagentStop: not fired/);

    // Untrusted: the repository's hooks do not run; the edit goes through.
    llm.queue(
      reply().tool('edit_file', { path: '.env', oldText: 'API=1', newText: 'API=2' }),
      reply().text('edited'),
    );
    const before = await ws.run(['-p', 'edit .env', '--yes']);
    expect(before.exitCode).toBe(0);
    expect(readFileSync(path.join(ws.repo, '.env'), 'utf8')).toBe('API=2\n');

    // Trust covers the settings and the scripts they run.
    const trust = await ws.run(['trust']);
    expect(trust.exitCode).toBe(0);
    expect(trust.stdout + trust.stderr).toContain('file_guard_example.py');

    llm.queue(
      reply().tool('edit_file', { path: '.env', oldText: 'API=2', newText: 'API=3' }),
      reply().tool('bash', { command: 'grep alpha notes.txt' }),
      reply().tool('bash', { command: 'echo "$FROM_SESSION_START" > seen.txt' }),
      reply().text('done'),
    );
    const after = await ws.run(['-p', 'edit .env, grep, echo', '--yes']);
    expect(after.exitCode).toBe(0);
    expect(readFileSync(path.join(ws.repo, '.env'), 'utf8')).toBe('API=2\n');
    const results = toolResults(llm).slice(-3);
    expect(results[0]).toContain('Blocked: Environment configuration file (may contain secrets)');
    expect(results[0]).toContain(`File: ${path.join(ws.repo, '.env')}`);
    expect(results[1]).toContain("Use 'rg' (ripgrep) instead of 'grep'");
    expect(readFileSync(path.join(ws.repo, 'seen.txt'), 'utf8')).toBe('direnv-ok\n');
    expect(after.stderr).toContain('Loading the project environment');
    expect(existsSync(path.join(ws.repo, 'subagent-stopped'))).toBe(false);
  });

  it('a changed hook script makes the repository untrusted again', async () => {
    const { ws } = await setup();
    writeClaudeSettings(ws.repo);
    expect((await ws.run(['trust'])).exitCode).toBe(0);
    const script = path.join(ws.repo, '.claude', 'hooks', 'file_guard_example.py');
    writeFileSync(script, readFileSync(script, 'utf8') + '\nprint("changed")\n');
    const diff = await ws.run(['trust', '--diff']);
    expect(diff.stdout).toContain('file_guard_example.py');
    expect((await ws.run(['config', 'show'])).stderr).toMatch(/changed since you trusted it/);
  });
});

interface Listed {
  name: string;
  transport: string;
  target: string;
  source: string;
  line: number | null;
  trust: string;
}

describe('Codex’s config.toml and Gemini CLI’s settings.json MCP servers (built binary)', () => {
  it('are listed from their places with their source: yours as yours, the repository’s untrusted', async () => {
    const { ws } = await setup();
    const copy = (from: string, to: string) => {
      mkdirSync(path.dirname(to), { recursive: true });
      copyFileSync(path.join(PEERS, from), to);
    };
    copy('codex/config.toml', path.join(ws.base, '.codex', 'config.toml'));
    copy('gemini/settings.json', path.join(ws.base, '.gemini', 'settings.json'));
    copy('gemini/project-settings.json', path.join(ws.repo, '.gemini', 'settings.json'));
    const listed = await ws.runJson<Listed[]>(['mcp', 'list']);
    const byName = Object.fromEntries(listed.map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual([
      'figma',
      'filteredServer',
      'httpServerWithAuth',
      'server-name',
    ]);
    expect(byName['server-name']).toMatchObject({
      transport: 'stdio',
      source: path.join(ws.base, '.codex', 'config.toml'),
      line: 1,
      trust: 'yours',
    });
    expect(byName['figma']).toMatchObject({ transport: 'http', line: 9, trust: 'yours' });
    expect(byName['filteredServer']).toMatchObject({
      transport: 'stdio',
      source: path.join(ws.base, '.gemini', 'settings.json'),
      trust: 'yours',
    });
    expect(byName['httpServerWithAuth']).toMatchObject({
      transport: 'http',
      source: path.join(ws.repo, '.gemini', 'settings.json'),
      trust: 'untrusted',
    });
    const { config: shown } = await ws.runJson<{
      config: { mcpServers: Record<string, Record<string, unknown>> };
    }>(['config', 'show']);
    expect(shown.mcpServers['server-name']).toMatchObject({
      command: 'npx',
      args: ['-y', 'mcp-server'],
      startupTimeout: 10,
      timeout: 60,
    });
    expect(shown.mcpServers['filteredServer']).toMatchObject({
      includeTools: ['safe_tool', 'file_reader', 'data_processor'],
      timeout: 30,
    });

    // Each source can be turned off.
    ws.writeGlobal(`peers:\n  codex: false\n  gemini: false\n`);
    expect(await ws.runJson<Listed[]>(['mcp', 'list'])).toEqual([]);
  });
});

describe('CLAUDE.md = @AGENTS.md + Claude notes (built binary)', () => {
  it('sends AGENTS.md once and the notes whole', async () => {
    const { ws, llm } = await setup();
    const agents = '# Agents\n' + 'Run npm test before you commit.\n'.repeat(450);
    const notes = '## Claude notes\n' + 'Prefer small commits, one change each.\n'.repeat(300);
    writeFileSync(path.join(ws.repo, 'AGENTS.md'), agents);
    writeFileSync(path.join(ws.repo, 'CLAUDE.md'), `@AGENTS.md\n\n${notes}`);
    // ~25 KB of instructions: a window that holds them with the tools (16k cannot: a clear error).
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: m\n    contextWindow: 128000\n`,
    );
    expect((await ws.run(['trust'])).exitCode).toBe(0);
    llm.queue(reply().text('ok'));
    const result = await ws.run(['-p', 'hi']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toContain('cut');
    const sentText = JSON.stringify(llm.requests[0]!.body);
    expect(sentText.split('Run npm test before you commit.').length - 1).toBe(450);
    expect(sentText.split('Prefer small commits, one change each.').length - 1).toBe(300);
  });
});

interface AgentsList {
  agents: { name: string; maxSteps?: number; source: string; description: string }[];
  problems: string[];
  notes: string[];
}

describe('frontmatter and opencode.json agents as their tools read them (built binary)', () => {
  it('a command with name:, an opencode agent with steps: and opencode.json agents load; unused keys are notes', async () => {
    const { ws, llm } = await setup();
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(ws.repo, file)), { recursive: true });
      writeFileSync(path.join(ws.repo, file), text);
    };
    // Shapes from Claude Code's slash-command and opencode's agent documentation.
    write(
      '.claude/commands/review-pr.md',
      '---\nname: review-pr\ndescription: Review a pull request\nargument-hint: [pr-number]\nallowed-tools: Read, Grep\n---\nReview pull request $ARGUMENTS.\n',
    );
    write(
      '.opencode/agent/docs-writer.md',
      '---\ndescription: Writes and maintains project documentation\nmode: subagent\nsteps: 5\ntools:\n  bash: false\n---\nYou are a technical writer.\n',
    );
    write('prompts/build.txt', 'You build with care.\n');
    write(
      'opencode.json',
      JSON.stringify(
        {
          $schema: 'https://opencode.ai/config.json',
          agent: {
            builder: {
              description: 'Builds the project',
              mode: 'primary',
              model: 'anthropic/claude-sonnet-4-20250514',
              prompt: '{file:./prompts/build.txt}',
              tools: { write: true, edit: true, bash: true },
            },
            'code-reviewer': {
              description: 'Reviews code for best practices and potential issues',
              mode: 'subagent',
              prompt:
                'You are a code reviewer. Focus on security, performance, and maintainability.',
              tools: { write: false, edit: false },
              steps: 8,
            },
          },
        },
        null,
        2,
      ),
    );
    expect((await ws.run(['trust'])).exitCode).toBe(0);
    const list = await ws.runJson<AgentsList>(['agents']);
    const byName = Object.fromEntries(list.agents.map((a) => [a.name, a]));
    expect(byName['docs-writer']).toMatchObject({ maxSteps: 5 });
    expect(byName['code-reviewer']).toMatchObject({ maxSteps: 8 });
    expect(byName['builder']?.description).toBe('Builds the project');
    expect(list.problems).toEqual([]);
    expect(list.notes).toEqual(
      expect.arrayContaining([expect.stringMatching(/review-pr\.md:2 name: not used by niffler/)]),
    );
    llm.queue(reply().text('reviewed'));
    const ran = await ws.run(['-p', '/review-pr 42']);
    expect(ran.exitCode).toBe(0);
    expect(JSON.stringify(llm.requests.at(-1)!.body)).toContain('Review pull request 42.');
    llm.queue(reply().text('built'));
    expect((await ws.run(['-p', 'go', '--agent', 'builder'])).exitCode).toBe(0);
    expect(JSON.stringify(llm.requests.at(-1)!.body)).toContain('You build with care.');
  });
});
