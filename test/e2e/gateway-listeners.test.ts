import { getEventListeners } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { httpGateway, textOf } from './gateway.ts';
import { makeE2eWorkspace, serverBin } from './workspace.ts';
import { remoteSpec } from '../fixtures/mcp/servers.ts';
import { createTransport } from '../../src/workers/mcp/transports.ts';

const CALLS = 1_000;
const IN_FLIGHT = 8;

/** The signal the SDK's HTTP client transport aborts on close and hands to every request. */
const lifetimeSignal = (transport: unknown): AbortSignal | undefined =>
  (transport as { _abortController?: AbortController })._abortController?.signal;

describe('an HTTP MCP client of the gateway, as the daemon builds it (createTransport)', () => {
  // The SDK hands its transport's lifetime signal to every 2025-era POST; undici's Request adds
  // an abort listener to it that only a GC removes. Before own-signal-fetch.ts that signal carried
  // about one listener per call made since the last GC (1003 after these 1000 calls here;
  // MaxListenersExceededWarning past 1500 in `npm run bench gateway`); now one per request open.
  it(`keeps the listeners on its lifetime signal to the requests in flight over ${CALLS} echo calls`, async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(`mcpServers:
  everything:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]
    maxConcurrency: ${IN_FLIGHT}
`);
    const gateway = await httpGateway(ws);
    const transport = createTransport(
      remoteSpec('gateway', gateway.url, 'http', {
        headers: { Authorization: `Bearer ${gateway.token}` },
      }),
      'http',
      { root: ws.repo, killGraceMs: 1_000, onStderr: () => {}, onNoise: () => {} },
    );
    const client = new Client({ name: 'listeners', version: '1.0.0' });
    await client.connect(transport);
    onTestFinished(() => client.close());
    // The 2025 era: the one whose requests carry the lifetime signal itself (a 2026-07-28
    // request carries a signal of its own composed with it).
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    const lifetime = lifetimeSignal(transport);
    expect(lifetime).toBeInstanceOf(AbortSignal);
    let left = CALLS;
    let most = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (left-- > 0) {
          const result = await client.callTool({
            name: 'everything__echo',
            arguments: { message: 'hi' },
          });
          expect(textOf(result)).toBe('Echo: hi');
          most = Math.max(most, getEventListeners(lifetime!, 'abort').length);
        }
      }),
    );
    // One per request in flight, one per SSE answer not yet closed behind a result already
    // handed back, and one for the standalone GET stream.
    expect(most).toBeLessThanOrEqual(2 * IN_FLIGHT + 1);
  }, 120_000);
});
