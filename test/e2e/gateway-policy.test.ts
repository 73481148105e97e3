import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Client, ElicitResult } from '@modelcontextprotocol/client';
import { connectSocket } from '../../src/main/daemon/client.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import type { McpStatusResult } from '../../src/main/protocol.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import {
  fixtureYaml,
  httpConsumer,
  httpGateway,
  stdioConsumer,
  textOf,
  type Era,
} from './gateway.ts';
import { makeE2eWorkspace } from './workspace.ts';

const eras: Era[] = ['legacy', 'modern'];

/** A consumer that declares form elicitation and answers each one with `answer()`. */
const asking = (answer: () => ElicitResult, asked: string[]) => ({
  capabilities: { elicitation: { form: {} } },
  setup: (client: Client) =>
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params.message);
      return answer();
    }),
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: Error & { code?: number }) => `${error.code}: ${error.message}`,
  );

describe('policy across the boundary', () => {
  it.each(eras)(
    'a consumer without elicitation is not offered ask tools, and one called by name is refused (%s)',
    async (era) => {
      const ws = makeE2eWorkspace();
      const client = await stdioConsumer(ws, { era });
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('read_file');
      expect(names).not.toContain('write_file');
      const refused = await refusal(
        client.callTool({ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }),
      );
      expect(refused).toContain('-32602');
      expect(refused).toContain('cannot meet: approval');
      expect(existsSync(path.join(ws.repo, 'a.txt'))).toBe(false);
    },
  );

  it.each(eras)(
    'a consumer with elicitation sees ask tools; its decline is honoured, its accept runs the call (%s)',
    async (era) => {
      const ws = makeE2eWorkspace();
      let accept = false;
      const asked: string[] = [];
      const client = await stdioConsumer(ws, {
        era,
        ...asking(
          () => (accept ? { action: 'accept', content: { approve: true } } : { action: 'decline' }),
          asked,
        ),
      });
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('write_file');
      const file = path.join(ws.repo, 'a.txt');
      const declined = await client.callTool({
        name: 'write_file',
        arguments: { path: 'a.txt', content: 'one' },
      });
      expect(declined.isError).toBe(true);
      expect(textOf(declined)).toContain('the user declined write_file');
      expect(existsSync(file)).toBe(false);
      accept = true;
      const done = await client.callTool({
        name: 'write_file',
        arguments: { path: 'a.txt', content: 'two' },
      });
      expect(done.isError).toBeFalsy();
      expect(readFileSync(file, 'utf8')).toBe('two');
      expect(asked).toHaveLength(2);
      expect(asked[0]).toContain('Allow write_file?');
    },
  );

  it('deny is never served; a protected place asks even where the client policy allows', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      `tools:\n  policy:\n    bash: deny\nserve:\n  clients:\n    test-legacy:\n      policy:\n        write_file: allow\n`,
    );
    const asked: string[] = [];
    const client = await stdioConsumer(
      ws,
      asking(() => ({ action: 'decline' }), asked),
    );
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('bash');
    expect(
      await refusal(client.callTool({ name: 'bash', arguments: { command: 'id' } })),
    ).toContain('denied by policy');
    const plain = await client.callTool({
      name: 'write_file',
      arguments: { path: 'b.txt', content: 'b' },
    });
    expect(plain.isError).toBeFalsy();
    expect(asked).toEqual([]);
    const guarded = await client.callTool({
      name: 'write_file',
      arguments: { path: '.niffler/config.yaml', content: 'tools: {}\n' },
    });
    expect(guarded.isError).toBe(true);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('niffler config');
    expect(existsSync(path.join(ws.repo, '.niffler', 'config.yaml'))).toBe(false);
  });

  it("an untrusted repository's servers are not served; serve.clients include narrows the rest", async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      `mcpServers:\n${fixtureYaml('mine', 'echo')}serve:\n  clients:\n    narrow:\n      include: [mine, read_file]\n`,
    );
    ws.writeRepo(`mcpServers:\n${fixtureYaml('theirs', 'echo')}`);
    const names = async (name: string) => {
      const client = await stdioConsumer(ws, { name, capabilities: { elicitation: {} } });
      return (await client.listTools()).tools.map((t) => t.name);
    };
    const all = await names('wide');
    expect(all).toContain('mine__say');
    expect(all.some((n) => n.startsWith('theirs__'))).toBe(false);
    expect((await names('narrow')).sort()).toEqual(
      all.filter((n) => n.startsWith('mine__') || n === 'read_file').sort(),
    );
  });
});

describe("the repository's own tools (.niffler/tools)", () => {
  it('are served once the repository is trusted: a read-only one to anyone, one that asks only to a consumer that can ask, its answer the approval', async () => {
    const ws = makeE2eWorkspace();
    const tool = (file: string, text: string) => {
      mkdirSync(path.join(ws.repo, '.niffler', 'tools'), { recursive: true });
      writeFileSync(path.join(ws.repo, '.niffler', 'tools', file), text);
    };
    tool(
      'todos.yaml',
      'description: Lists the TODO lines\nparameters: { type: object, properties: {} }\nannotations: { readOnlyHint: true }\ncommand: echo "no TODO left"\n',
    );
    tool(
      'shout.yaml',
      'description: Says it louder\nparameters: { type: object, properties: { text: { type: string } }, required: [text] }\ncommand: |\n  tr a-z A-Z\n',
    );
    const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);
    // Untrusted, the repository contributes nothing that runs.
    const early = await stdioConsumer(ws, { capabilities: { elicitation: { form: {} } } });
    expect(await names(early)).not.toContain('todos');
    expect(await refusal(early.callTool({ name: 'todos', arguments: {} }))).toMatch(
      /^-32602: .*unknown tool "todos"/,
    );
    await early.close();

    expect((await ws.run(['trust'])).exitCode).toBe(0);
    const plain = await stdioConsumer(ws, { name: 'plain' });
    expect(await names(plain)).toContain('todos');
    expect(await names(plain)).not.toContain('shout');
    expect(textOf(await plain.callTool({ name: 'todos', arguments: {} })).trim()).toBe(
      'no TODO left',
    );
    const listed = (await plain.listTools()).tools.find((t) => t.name === 'todos');
    expect(listed).toMatchObject({
      description: 'Lists the TODO lines',
      annotations: { readOnlyHint: true },
    });

    const asked: string[] = [];
    const approving = await stdioConsumer(ws, {
      name: 'approving',
      ...asking(() => ({ action: 'accept', content: { approve: true } }), asked),
    });
    expect(await names(approving)).toContain('shout');
    const shouted = await approving.callTool({ name: 'shout', arguments: { text: 'hi' } });
    expect(asked).toEqual([expect.stringContaining('Allow shout?')]);
    expect(JSON.parse(textOf(shouted))).toEqual({ TEXT: 'HI' });
  });
});

describe('the catalog changes, and consumers hear of it', () => {
  it.each(eras)(
    'list_changed reaches a consumer when a backing server adds tools (%s)',
    async (era) => {
      const ws = makeE2eWorkspace();
      ws.writeGlobal(
        `mcpServers:\n${fixtureYaml('lc', 'list-changed')}tools:\n  policy:\n    'lc__*': allow\n`,
      );
      // Each notification wakes the next wait (one may come from the server becoming ready first).
      let heard: () => void = () => {};
      const next = () => new Promise<void>((resolve) => (heard = resolve));
      let notified = next();
      const client = await stdioConsumer(ws, {
        era,
        setup: (c) =>
          c.setNotificationHandler('notifications/tools/list_changed', () => {
            heard();
            notified = next();
          }),
      });
      if (era === 'modern') await client.listen({ toolsListChanged: true });
      const names = async () => (await client.listTools()).tools.map((t) => t.name);
      expect(await names()).not.toContain('lc__gamma');
      await client.callTool({ name: 'lc__add_tools', arguments: { names: ['gamma'] } });
      while (!(await names()).includes('lc__gamma')) await notified;
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('lc__gamma');
    },
  );
});

describe('one warm server for everyone', () => {
  it('two consumers and an interactive session use the same server process (checked by pid)', async () => {
    const ws = makeE2eWorkspace();
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: m\n    toolProtocol: native\nmcpServers:\n${fixtureYaml('echo', 'echo')}tools:\n  policy:\n    'echo__*': allow\n`,
    );
    const viaStdio = await stdioConsumer(ws, { name: 'one' });
    const viaHttp = await httpConsumer(await httpGateway(ws), { name: 'two', era: 'modern' });
    const pidOf = async (client: Client) =>
      Number(textOf(await client.callTool({ name: 'echo__pid', arguments: {} })));
    const pids = [await pidOf(viaStdio), await pidOf(viaHttp)];

    const session = await connectSocket(nifflerPaths(ws.repo, ws.env).socket);
    onTestFinished(() => session.close());
    expect((await session.hello('test')).ok).toBe(true);
    llm.queue(reply().tool('echo__pid', {}), reply().text('done'));
    const { sessionId } = await session.request('session/open', {});
    await session.request('session/prompt', { sessionId, text: 'pid?', interactive: true });
    const [, second] = await llm.waitForRequests(2);
    const toolMessage = (second!.body as { messages: { role: string; content: string }[] }).messages
      .filter((m) => m.role === 'tool')
      .at(-1)!;
    pids.push(Number(toolMessage.content));

    const status = await ws.runJson<McpStatusResult>(['mcp', 'status']);
    const echo = status.servers.find((s) => s.name === 'echo')!;
    expect(pids).toEqual([echo.pid, echo.pid, echo.pid]);
    expect(echo.restarts).toBe(0);
    expect(status.consumers?.map((c) => [c.name, c.transport, c.calls]).sort()).toEqual([
      ['one', 'stdio', 1],
      ['two', 'http', 1],
    ]);
    const table = (await ws.run(['mcp', 'status'])).stdout;
    expect(table).toContain('Gateway consumers (niffler mcp serve):');
    expect(table).toMatch(/two 1\.0\.0\s+http\s+2026-07-28\s+all/);
    // The daemon log records each consumer's calls.
    const log = readFileSync(nifflerPaths(ws.repo, ws.env).daemonLog, 'utf8');
    const calls = log.split('\n').filter((l) => l.includes('"gateway call"'));
    expect(calls.map((l) => (JSON.parse(l) as { consumer: string }).consumer).sort()).toEqual([
      'one',
      'two',
    ]);
  });
});
