import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness, toolMessages } from './harness.ts';

/** A local service the model should not reach unasked: counts its requests. */
const localService = async () => {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('local secret page');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin`, hits };
};

describe('fetch to a private address asks even where fetch is allowed', () => {
  it('asks the user; once allowed, the call runs again and reaches it', async () => {
    const h = await startHarness('in-process', { config: 'tools:\n  policy:\n    fetch: allow\n' });
    const service = await localService();
    h.llm.queue(reply().tool('fetch', { url: service.url }), reply().text('done'));
    const id = await h.open();
    expect((await h.prompt(id, 'look')).outcome).toBe('answered');
    expect(h.approvals).toEqual([
      {
        tool: 'fetch',
        destructive: false,
        reason: 'it reaches 127.0.0.1 (127.0.0.1), a loopback address',
      },
    ]);
    expect(service.hits).toEqual(['/admin']);
    expect(JSON.stringify(toolMessages(h.llm.requests[1]!.body))).toContain('local secret page');
  });

  it('a denial, or a run with no one to ask (--yes included), never reaches it', async () => {
    const h = await startHarness('in-process', { config: 'tools:\n  policy:\n    fetch: allow\n' });
    const service = await localService();
    h.answer = () => 'deny';
    h.llm.queue(reply().tool('fetch', { url: service.url }), reply().text('ok'));
    const id = await h.open();
    await h.prompt(id, 'look');
    expect(JSON.stringify(toolMessages(h.llm.requests[1]!.body))).toContain('The user denied it.');
    h.llm.queue(reply().tool('fetch', { url: service.url }), reply().text('ok'));
    await h.prompt(id, 'look', { interactive: false, yes: true });
    const told = JSON.stringify(toolMessages(h.llm.requests[3]!.body));
    expect(told).toContain('tools.fetch.allowPrivate: [127.0.0.1]');
    expect(told).toContain('No one can be asked in this run.');
    expect(service.hits).toEqual([]);
  });
});
