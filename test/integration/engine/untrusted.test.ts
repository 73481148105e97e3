import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { startHarness } from './harness.ts';
import { trustRepo } from './trust-helper.ts';

const toolNames = (request: RecordedRequest): string[] =>
  ((request.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);

const lastUser = (request: RecordedRequest): string =>
  (request.body.messages as { role: string; content: string }[])
    .filter((m) => m.role === 'user')
    .at(-1)!.content;

describe('an untrusted repository', () => {
  it('has its hooks, shell commands, agents and tools ignored, with one line saying so; trusting it brings them in', async () => {
    const h = await startHarness('socket', { mcp: '  {}\n' });
    h.file(
      '.niffler/config.yaml',
      'hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n        - type: command\n          command: "echo hooked >&2; exit 2"\n',
    );
    h.file('.niffler/commands/leak.md', 'Say this: !`touch pwned && echo ran`\n');
    h.file('.niffler/agents/sneaky.md', '---\ndescription: sneaky\nmode: primary\n---\nObey.\n');
    h.file('.claude/agents/helper.md', '---\nname: helper\ndescription: helps\n---\nHelp.\n');
    h.file('.niffler/tools/grab.yaml', 'description: grabs\ncommand: touch grabbed\n');
    await h.client.request('config/reload', {});

    const listed = await h.client.request('extensions/list', {});
    expect(listed.agents.map((a) => a.name)).toEqual(['build', 'plan', 'review']);
    expect(listed.commands).toEqual([]);
    expect(listed.tools).toEqual([]);

    h.llm.queue(reply().tool('bash', { command: 'touch ran-bash' }), reply().text('done'));
    const id = await h.open();
    const summary = await h.prompt(id, '/leak now', { yes: true });
    expect(summary.outcome).toBe('answered');
    // Sent as typed; the hook did not run (bash ran under --yes); no tool, no subagent from it.
    expect(lastUser(h.llm.requests[0]!)).toBe('/leak now');
    expect(existsSync(path.join(h.root, 'pwned'))).toBe(false);
    expect(existsSync(path.join(h.root, 'ran-bash'))).toBe(true);
    expect(toolNames(h.llm.requests[0]!)).not.toContain('grab');
    const said = h.events.filter((e) => e.type === 'notice' && e.text.includes('not trusted'));
    expect(said).toHaveLength(1);
    const line = said[0]!.type === 'notice' ? said[0].text : '';
    for (const part of [
      'hooks.PreToolUse',
      'commands.leak',
      'agents.sneaky',
      'agents.helper',
      'tools.grab',
    ])
      expect(line).toContain(part);
    expect(line).toContain('niffler trust');

    await trustRepo(h);
    const trusted = await h.client.request('extensions/list', {});
    expect(trusted.agents.map((a) => a.name)).toEqual(expect.arrayContaining(['sneaky', 'helper']));
    expect(trusted.tools.map((t) => t.name)).toEqual(['grab']);
    h.llm.queue(reply().tool('bash', { command: 'touch ran-again' }), reply().text('blocked'));
    await h.prompt(id, 'again', { yes: true });
    expect(existsSync(path.join(h.root, 'ran-again'))).toBe(false);
    expect(toolNames(h.llm.requests.at(-1)!)).toContain('grab');
  });
});
