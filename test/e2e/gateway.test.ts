import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import {
  httpConsumer,
  httpGateway,
  stdioConsumer,
  textOf,
  type ConsumerOptions,
  type Era,
} from './gateway.ts';
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
