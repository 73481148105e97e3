import { describe, expect, it, onTestFinished } from 'vitest';
import type { McpPromptInfo, McpServerStatus } from '../../src/main/protocol.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { fixtureSpec } from '../fixtures/mcp/servers.ts';
import { CLI } from './cli.ts';
import { startTerminal } from './tui-terminal.ts';
import { makeE2eWorkspace } from './workspace.ts';

// What MCP offers besides tools, through the built binary and the daemon: prompts (CLI and
// slash commands), resources (CLI and @-mentions), server instructions in the system prompt, and
// the protocol trace; with the v2-server fixture that speaks only 2026-07-28.
const modern = fixtureSpec('modern');
const config = (llmUrl: string) => `model: fake
models:
  fake:
    provider: openai
    baseUrl: ${llmUrl}/v1
    model: fake-model
    toolProtocol: native
mcpServers:
  modern:
    command: ${JSON.stringify(modern.command)}
    args: ${JSON.stringify(modern.args)}
`;

describe('prompts, resources, instructions and the trace (built binary, daemon)', () => {
  it('niffler mcp prompts | prompt | resources | read | logs --trace, and the negotiated revision', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(config('http://127.0.0.1:9'));
    const status = await ws.runJson<{ servers: McpServerStatus[] }>(['mcp', 'status', '--wait']);
    expect(status.servers[0]).toMatchObject({
      name: 'modern',
      state: 'ready',
      protocolVersion: '2026-07-28',
      instructions: 'A fixture that speaks only protocol 2026-07-28.',
    });

    const prompts = await ws.runJson<McpPromptInfo[]>(['mcp', 'prompts']);
    expect(prompts).toEqual([
      {
        server: 'modern',
        name: 'greet',
        description: 'Greets someone',
        arguments: [{ name: 'who', required: true }],
      },
    ]);
    const prompt = await ws.run(['mcp', 'prompt', 'modern', 'greet', '--arg', 'who=world']);
    expect(prompt.stdout.trim()).toBe('Hello world');
    const missing = await ws.run(['mcp', 'prompt', 'modern', 'greet', '--arg', 'nope']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('--arg takes NAME=VALUE');

    const resources = await ws.run(['mcp', 'resources']);
    expect(resources.stdout).toContain('modern:mem://note  note (text/plain)');
    expect(resources.stdout).toContain('modern:mem://notes/{name}  notes (template)');
    expect((await ws.run(['mcp', 'read', 'modern', 'mem://note'])).stdout.trim()).toBe(
      '[resource mem://note]\na modern note',
    );

    await ws.run(['mcp', 'call', 'modern', 'say', '--args', '{"text":"traced"}']);
    const trace = (await ws.run(['mcp', 'logs', 'modern', '--trace'])).stdout.split('\n');
    const request = trace.find(
      (l) => / → request tools\/call #\d+ /.test(l) && l.includes('traced'),
    );
    expect(request).toBeDefined();
    const id = / #(\d+) /.exec(request!)![1];
    expect(trace.find((l) => l.includes(`← response tools/call #${id} `))).toMatch(
      / ← response tools\/call #\d+ \d+ chars \d+ ms .*stdio: traced/,
    );
    const help = await ws.run(['mcp', 'logs', '--help']);
    expect(help.stdout).toContain('--trace');
  });
});

/** The status bar once the server is up, and the empty input box above it. */
const idle = (screen: string) =>
  /MCP 1\/1/.test(screen) && screen.includes('> ') && !screen.includes('esc to cancel');

describe('prompts and resources in the interactive session (tmux)', () => {
  it('/server:prompt with a completed argument, and an @server:uri mention the model sees', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const ws = makeE2eWorkspace();
    ws.writeGlobal(config(llm.url));
    const term = await startTerminal({
      command: [process.execPath, CLI],
      cwd: ws.repo,
      env: ws.env,
    });
    await term.waitFor(idle);

    // The prompt is a slash command, completed by name, its argument by the server.
    await term.type('/modern:gr');
    await term.waitFor('/modern:greet');
    await term.press('Tab');
    await term.type('ni');
    await term.waitFor((s) => /^\s+niffler\s*$/m.test(s));
    await term.press('Tab');
    llm.queue(reply().text('Hello to you too.'));
    await term.press('Enter');
    await term.waitFor((s) => s.includes('Hello to you too.') && idle(s));
    const first = llm.requests[0]!.body.messages as { role: string; content: string }[];
    expect(first.at(-1)).toEqual({ role: 'user', content: 'Hello niffler' });
    // The trusted server's instructions are in the system prompt, under its name.
    expect(first[0]?.content).toContain('## Instructions from MCP servers');
    expect(first[0]?.content).toContain(
      '### modern\n\nA fixture that speaks only protocol 2026-07-28.',
    );

    // A resource mention attaches its content to the message.
    llm.queue(reply().text('It is a modern note.'));
    await term.type('what does @modern:mem://note say?');
    await term.press('Enter');
    await term.waitFor((s) => s.includes('It is a modern note.') && idle(s));
    const second = llm.requests[1]!.body.messages as { role: string; content: string }[];
    expect(second.at(-1)?.content).toBe(
      'what does @modern:mem://note say?\n\n<resource server="modern" uri="mem://note">\n[resource mem://note]\na modern note\n</resource>',
    );

    // /trace shows the protocol exchange of the session.
    await term.type('/trace modern');
    await term.press('Enter');
    const traced = await term.waitFor('niffler mcp logs NAME --trace');
    expect(traced).toMatch(/→ request resources\/read #\d+/);
    expect(traced).toMatch(/← response resources\/read #\d+ \d+ chars \d+ ms/);
    await term.press('C-d');
    await term.waitFor('[exited 0]');
  });
});
