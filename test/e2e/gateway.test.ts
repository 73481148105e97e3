import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import {
  fixtureYaml,
  httpConsumer,
  httpGateway,
  stdioConsumer,
  textOf,
  type ConsumerOptions,
  type Era,
} from './gateway.ts';
import { waitUntil } from '../../src/main/daemon/lifecycle.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import { makeE2eWorkspace, serverBin } from './workspace.ts';

const everything = `mcpServers:
  everything:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]
`;

type Transport = 'stdio' | 'http';

/** A consumer of the workspace's gateway over `transport` (an HTTP gateway started for it). */
const consumer = async (
  ws: ReturnType<typeof makeE2eWorkspace>,
  transport: Transport,
  options: ConsumerOptions & { setup?: (client: Client) => void } = {},
) =>
  transport === 'stdio' ? stdioConsumer(ws, options) : httpConsumer(await httpGateway(ws), options);

const cases: [Transport, Era][] = [
  ['stdio', 'legacy'],
  ['stdio', 'modern'],
  ['http', 'legacy'],
  ['http', 'modern'],
];

describe('niffler mcp serve: real SDK clients of both eras', () => {
  it.each(cases)(
    'over %s (%s era): lists, calls and gets progress from server-everything',
    async (transport, era) => {
      const ws = makeE2eWorkspace();
      ws.writeGlobal(everything);
      const client = await consumer(ws, transport, { era });
      expect(client.getNegotiatedProtocolVersion()).toBe(
        era === 'modern' ? '2026-07-28' : '2025-11-25',
      );
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['read_file', 'grep', 'everything__echo']));
      // Without elicitation nothing that asks is offered: write_file and bash ask by default.
      expect(names).not.toContain('write_file');
      expect(names).not.toContain('bash');
      expect(
        textOf(await client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } })),
      ).toBe('Echo: hi');
      const progress: number[] = [];
      const long = await client.callTool(
        {
          name: 'everything__trigger-long-running-operation',
          arguments: { duration: 0.3, steps: 3 },
        },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(textOf(long)).toContain('Long running operation completed');
      expect(progress).toEqual([1, 2, 3]);
      writeFileSync(path.join(ws.repo, 'notes.txt'), 'a note\n');
      expect(
        textOf(await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } })),
      ).toContain('a note');
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      expect(prompts).toContain('everything__simple-prompt');
      const prompt = await client.getPrompt({ name: 'everything__simple-prompt' });
      expect(prompt.messages.length).toBeGreaterThan(0);
      const { resources } = await client.listResources();
      const doc = resources.find((r) => r.uri.endsWith('architecture.md'))!;
      expect(doc.name).toBe('everything__architecture.md');
      const read = await client.readResource({ uri: doc.uri });
      expect(JSON.stringify(read.contents)).toContain('Architecture');
    },
  );
});

describe('niffler mcp serve: a backing server still starting', () => {
  // A consumer may ask by name or URI before it lists (it knows the names from an earlier session;
  // the conformance suite's scenarios do). What a starting server will offer is not "unknown":
  // the gateway answers once the server is up. The server here waits on a FIFO the test opens.
  it.each([
    ['scoped (--server gated)', true],
    ['unscoped (gated__ names)', false],
  ] as const)(
    '%s: prompts/get, completion/complete, resources/read and subscribe asked before it is up are answered once it is',
    async (_label, scoped) => {
      const ws = makeE2eWorkspace();
      const gate = path.join(ws.base, 'gate');
      execFileSync('mkfifo', [gate]);
      ws.writeGlobal(
        `mcpServers:\n${fixtureYaml('gated', 'gated', `    trust: true\n    env:\n      NIFFLER_TEST_GATE: ${JSON.stringify(gate)}\n`)}`,
      );
      // The 2025 era, as the conformance suite's 0.1.16 server scenarios speak it (it has ping).
      const client = await stdioConsumer(ws, {
        era: 'legacy',
        ...(scoped ? { args: ['--server', 'gated'] } : {}),
      });
      const named = (name: string) => (scoped ? name : `gated__${name}`);
      const asked = Promise.all([
        client.getPrompt({ name: named('test_simple_prompt') }),
        client.complete({
          ref: { type: 'ref/prompt', name: named('test_prompt_with_arguments') },
          argument: { name: 'arg1', value: 'a' },
        }),
        client.complete({
          ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
          argument: { name: 'id', value: '1' },
        }),
        client.readResource({ uri: 'test://static-text' }),
        client.subscribeResource({ uri: 'test://static-text' }),
      ]);
      asked.catch(() => {}); // awaited below; a failure before then is the test's, not unhandled
      // The requests are with the gateway (it answered what was sent after them); only now may
      // the server start.
      await client.ping();
      await writeFile(gate, 'go');
      const [prompt, byPrompt, byTemplate, read] = await asked;
      expect(prompt.messages.length).toBeGreaterThan(0);
      expect(byPrompt.completion.values).toEqual([]);
      expect(byTemplate.completion).toEqual(expect.objectContaining({ values: [] }));
      expect(JSON.stringify(read.contents)).toContain('static text resource');
      // A name no server offers is still unknown once they are all up.
      await expect(client.getPrompt({ name: named('no_such_prompt') })).rejects.toThrow(
        /unknown prompt/,
      );
    },
  );

  it('a consumer that leaves while its requests wait for the server is ended at once, and the log says so', async () => {
    const ws = makeE2eWorkspace();
    const gate = path.join(ws.base, 'gate');
    execFileSync('mkfifo', [gate]);
    ws.writeGlobal(
      `mcpServers:\n${fixtureYaml('gated', 'gated', `    trust: true\n    env:\n      NIFFLER_TEST_GATE: ${JSON.stringify(gate)}\n`)}`,
    );
    const client = await stdioConsumer(ws, { era: 'legacy', args: ['--server', 'gated'] });
    const waiting = client.getPrompt({ name: 'test_simple_prompt' });
    waiting.catch(() => {}); // the consumer leaves before it is answered
    await client.ping(); // the request is with the gateway
    await client.close();
    const log = nifflerPaths(ws.repo, ws.env).daemonLog;
    const disconnected = () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .some((line) => line.includes('"gateway consumer disconnected"'));
    // Bounded: before the fix the consumer's end waited for the server, which waits for the FIFO.
    expect(await waitUntil(async () => disconnected(), 10_000)).toBe(true);
    await writeFile(gate, 'go');
  });
});
