import {
  Client,
  InMemoryTransport,
  LATEST_PROTOCOL_VERSION,
  type JSONRPCMessage,
} from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { keepProgressInOrder } from '../../../src/workers/mcp/in-order.ts';

/**
 * A server that answers in one synchronous burst: for `tools/call`, every progress notification
 * and then the result, as one read from a busy server's stdout would deliver them.
 */
const burstServer = async (server: InMemoryTransport, steps: number) => {
  server.onmessage = (message: JSONRPCMessage) => {
    if (!('id' in message) || !('method' in message)) return;
    const reply = (result: Record<string, unknown>) =>
      void server.send({ jsonrpc: '2.0', id: message.id, result });
    if (message.method === 'initialize')
      reply({
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: { tools: {} },
        serverInfo: { name: 'burst', version: '1.0.0' },
      });
    if (message.method === 'tools/call') {
      const token = (message.params as { _meta: { progressToken: number } })._meta.progressToken;
      for (let progress = 1; progress <= steps; progress++)
        void server.send({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: token, progress, total: steps },
        });
      reply({ content: [{ type: 'text', text: 'done' }] });
    }
  };
  await server.start();
};

const callWithProgress = async (wrap: boolean) => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await burstServer(serverSide, 3);
  const client = new Client({ name: 'test', version: '1.0.0' });
  const errors: string[] = [];
  client.onerror = (error) => errors.push(error.message);
  await client.connect(wrap ? keepProgressInOrder(clientSide) : clientSide);
  const seen: number[] = [];
  const result = await client.callTool(
    { name: 'x', arguments: {} },
    { onprogress: ({ progress }) => seen.push(progress) },
  );
  await client.close();
  return { seen, errors, result };
};

describe('keepProgressInOrder', () => {
  it('the bare SDK client loses progress that arrives with the result (the bug it works around)', async () => {
    const { seen } = await callWithProgress(false);
    expect(seen.length).toBeLessThan(3);
  });

  it('delivers every progress notification, in order, before the result', async () => {
    const { seen, errors, result } = await callWithProgress(true);
    expect(seen).toEqual([1, 2, 3]);
    expect(errors).toEqual([]);
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
  });
});
