import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/main/extensions/workspace-config.ts';
import { testEnv } from '../../fixtures/env.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { startHarness, toolMessages } from './harness.ts';
import { trustRepo } from './trust-helper.ts';

type Hook = { matcher?: string; command: string; timeout?: number };

/** `hooks:` YAML for events → hooks (each its own matcher entry). */
const hooksYaml = (events: Record<string, Hook[]>): string =>
  `hooks:\n${Object.entries(events)
    .map(
      ([event, hooks]) =>
        `  ${event}:\n${hooks
          .map(
            (h) =>
              `    - ${h.matcher ? `matcher: ${JSON.stringify(h.matcher)}\n      ` : ''}hooks:\n        - type: command\n          command: ${JSON.stringify(h.command)}\n${h.timeout ? `          timeout: ${h.timeout}\n` : ''}`,
          )
          .join('')}`,
    )
    .join('')}`;

const messages = (request: RecordedRequest) =>
  request.body.messages as { role: string; content: string }[];

const notices = (events: { type: string; text?: string }[]) =>
  events.filter((e) => e.type === 'notice').map((e) => e.text ?? '');

describe('hooks', () => {
  it('a PreToolUse hook that exits 2 blocks a bash call and the model receives the reason; hooks read the JSON input, sandboxed, without secrets', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-secret-for-the-test');
    const h = await startHarness('in-process', {
      mcp: '  {}\n',
      config: hooksYaml({
        PreToolUse: [
          { matcher: 'Bash', command: "echo 'no bash today: read the file instead' >&2; exit 2" },
          {
            matcher: 'Read|Grep',
            command:
              'cat > hook-input.json; env > hook-env.txt; touch "$HOME/escaped" 2>/dev/null; exit 0',
          },
        ],
      }),
    });
    h.file('a.txt', 'alpha\n');
    h.llm.queue(
      reply().tool('bash', { command: 'touch ran' }),
      reply().tool('read_file', { path: 'a.txt' }),
      reply().text('done'),
    );
    const id = await h.open();
    const summary = await h.prompt(id, 'go', { yes: true });
    expect(summary.denied).toEqual(['bash']);
    expect(existsSync(path.join(h.root, 'ran'))).toBe(false);
    expect(String(toolMessages(h.llm.requests[1]!.body)[0]!.content)).toContain(
      'a PreToolUse hook blocked it: no bash today: read the file instead',
    );
    const input = JSON.parse(readFileSync(path.join(h.root, 'hook-input.json'), 'utf8'));
    expect(input).toMatchObject({
      session_id: id,
      hook_event_name: 'PreToolUse',
      tool_name: 'read_file',
      tool_input: { path: 'a.txt' },
      cwd: h.root,
    });
    const env = readFileSync(path.join(h.root, 'hook-env.txt'), 'utf8');
    expect(env).toContain(`NIFFLER_PROJECT_DIR=${h.root}`);
    expect(env).not.toContain('sk-secret-for-the-test');
    expect(existsSync(path.join(path.dirname(h.root), 'escaped'))).toBe(false);
  });

  it('hooks that hang, flood, die by a signal or print invalid JSON are bounded and reported; the turn goes on and the call still asks', async () => {
    const h = await startHarness('in-process', {
      mcp: '  {}\n',
      config: hooksYaml({
        PreToolUse: [
          { command: 'sleep 30', timeout: 1 },
          { command: 'yes flood' },
          { command: 'kill -9 $$' },
          { command: 'echo \'{"decision": "allow"\'' },
        ],
      }),
    });
    h.answer = () => 'deny';
    h.llm.queue(reply().tool('write_file', { path: 'w.txt', content: 'x' }), reply().text('ok'));
    const id = await h.open();
    const summary = await h.prompt(id, 'write');
    expect(summary.outcome).toBe('answered');
    expect(h.approvals.map((a) => a.tool)).toEqual(['write_file']);
    expect(existsSync(path.join(h.root, 'w.txt'))).toBe(false);
    const said = notices(h.events).join('\n');
    expect(said).toContain('PreToolUse hook `sleep 30` timed out after 1s and was ended');
    expect(said).toContain(
      'PreToolUse hook `yes flood` printed far more than is read and was ended',
    );
    expect(said).toMatch(/PreToolUse hook `kill -9 \$\$` died of SIGKILL/);
    expect(said).toContain('printed invalid JSON');
  });

  it('UserPromptSubmit and SessionStart add context, PostToolUse adds to the result, Stop keeps the model going once', async () => {
    const h = await startHarness('in-process', {
      mcp: '  {}\n',
      config: hooksYaml({
        SessionStart: [{ command: 'echo "the build is red since Monday"' }],
        UserPromptSubmit: [
          { command: `echo '{"hookSpecificOutput":{"additionalContext":"ticket ABC-1"}}'` },
        ],
        PostToolUse: [{ matcher: 'read_file', command: `echo '{"additionalContext":"read ok"}'` }],
        Stop: [
          {
            command:
              "grep -q '\"stop_hook_active\":true' && exit 0; echo 'run the tests first' >&2; exit 2",
          },
        ],
      }),
    });
    h.file('a.txt', 'alpha\n');
    h.llm.queue(
      reply().tool('read_file', { path: 'a.txt' }),
      reply().text('finished'),
      reply().text('tests run, finished'),
    );
    const id = await h.open();
    const summary = await h.prompt(id, 'fix it');
    expect(summary).toMatchObject({ outcome: 'answered', text: 'tests run, finished', steps: 3 });
    const [first, second, third] = h.llm.requests.map(messages);
    expect(first![0]!.content).toContain('the build is red since Monday');
    expect(first!.at(-1)!.content).toBe('fix it\n\n<hook-context>\nticket ABC-1\n</hook-context>');
    expect(second!.at(-1)!.content).toContain('alpha');
    expect(second!.at(-1)!.content).toContain('[read ok]');
    expect(third!.at(-1)).toMatchObject({
      role: 'user',
      content: '[a Stop hook says the work is not done] run the tests first',
    });
  });

  it("a repository's hooks run only once trusted, and a changed hook command makes it changed again", async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    const env = testEnv({ HOME: path.dirname(h.root), NIFFLER_HOME: h.home });
    const repoHooks = (text: string) =>
      h.file(
        '.niffler/config.yaml',
        hooksYaml({ UserPromptSubmit: [{ command: `echo ${text}` }] }),
      );
    repoHooks('first');
    await h.client.request('config/reload', {});
    h.llm.queue(reply().text('a'), reply().text('b'));
    const id = await h.open();
    await h.prompt(id, 'hello');
    expect(messages(h.llm.requests[0]!).at(-1)!.content).toBe('hello');
    expect(notices(h.events).filter((n) => n.includes('not trusted'))).toEqual([
      expect.stringContaining('hooks.UserPromptSubmit'),
    ]);
    await trustRepo(h);
    await h.prompt(id, 'again');
    expect(messages(h.llm.requests[1]!).at(-1)!.content).toContain('first');

    repoHooks('second');
    const loaded = loadConfig({ root: h.root, env });
    expect(loaded.ok && loaded.value.trust.level).toBe('changed');
    expect(loaded.ok && loaded.value.trust.changes).toEqual([
      expect.objectContaining({ key: 'repo:hooks.UserPromptSubmit', change: 'changed' }),
    ]);
    expect(loaded.ok && loaded.value.hooks).toEqual([]);
  });
});
