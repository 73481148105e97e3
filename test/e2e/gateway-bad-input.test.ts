import { spawn } from 'node:child_process';
import http from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { McpStatusResult } from '../../src/main/protocol.ts';
import { CLI } from './cli.ts';
import { fixtureYaml, httpConsumer, httpGateway, stdioConsumer, textOf } from './gateway.ts';
import { makeE2eWorkspace } from './workspace.ts';

type Message = { id?: unknown; error?: { code: number; message: string }; result?: unknown };

/** `niffler mcp serve` driven by hand: raw lines in, parsed messages out. */
const rawServe = (ws: ReturnType<typeof makeE2eWorkspace>) => {
  const child = spawn(process.execPath, [CLI, 'mcp', 'serve'], {
    cwd: ws.repo,
    env: ws.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  onTestFinished(async () => {
    child.kill();
    await exited;
  });
  const received: Message[] = [];
  const waiters: (() => void)[] = [];
  let buffer = '';
  child.stdout.on('data', (d: Buffer) => {
    buffer += d.toString();
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      received.push(JSON.parse(buffer.slice(0, nl)) as Message);
      buffer = buffer.slice(nl + 1);
      for (const wake of waiters.splice(0)) wake();
    }
  });
  const line = (text: string) => child.stdin.write(`${text}\n`);
  const send = (message: object) => line(JSON.stringify({ jsonrpc: '2.0', ...message }));
  /** The first message received that `test` accepts, waiting for it. */
  const next = async (test: (m: Message) => boolean): Promise<Message> => {
    for (;;) {
      const found = received.find(test);
      if (found) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const initialize = async () => {
    send({
      id: 'init',
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    await next((m) => m.id === 'init');
    send({ method: 'notifications/initialized' });
  };
  return { child, exited, line, send, next, initialize, received };
};

const servers = (ws: ReturnType<typeof makeE2eWorkspace>) =>
  ws.writeGlobal(
    `mcpServers:\n${fixtureYaml('slow', 'slow')}${fixtureYaml('echo', 'echo')}${fixtureYaml('crash', 'crash')}tools:\n  policy:\n    '*__*': allow\n`,
  );

describe('bad input to the gateway', () => {
  it('malformed JSON-RPC gets its error; the consumer goes on', async () => {
    const ws = makeE2eWorkspace();
    const raw = rawServe(ws);
    raw.line('{not json');
    expect(await raw.next((m) => m.error?.code === -32700)).toMatchObject({ id: null });
    raw.line(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 5 }));
    expect((await raw.next((m) => m.id === 7)).error?.code).toBe(-32600);
    await raw.initialize();
    raw.send({ id: 'list', method: 'tools/list' });
    const list = await raw.next((m) => m.id === 'list');
    expect(JSON.stringify(list.result)).toContain('read_file');
    raw.send({ id: 'nope', method: 'tools/call', params: { name: 'nope', arguments: {} } });
    expect((await raw.next((m) => m.id === 'nope')).error).toMatchObject({ code: -32602 });
  });

  it('a flood is refused past 64 requests in flight; others are unaffected; a disconnect cancels the backing calls', async () => {
    const ws = makeE2eWorkspace();
    servers(ws);
    const raw = rawServe(ws);
    await raw.initialize();
    for (let i = 0; i < 100; i++)
      raw.send({ id: i, method: 'tools/call', params: { name: 'slow__wait', arguments: {} } });
    const refused = await raw.next((m) => m.error?.code === -32000);
    expect(refused.error?.message).toContain('too many requests in flight');
    const other = await stdioConsumer(ws, { name: 'other' });
    expect(textOf(await other.callTool({ name: 'echo__say', arguments: { text: 'fine' } }))).toBe(
      'fine',
    );
    // The flood's calls reach the slow server only once it is up (they wait for starting servers
    // first): on a busy machine that can be after the above. The disconnect must find them there.
    const deadline = Date.now() + 20_000;
    const atServer = async () =>
      (await ws.runJson<McpStatusResult>(['mcp', 'status', '--json'])).servers.find(
        (s) => s.name === 'slow',
      )?.inFlight ?? 0;
    while ((await atServer()) === 0 && Date.now() < deadline);
    expect(await atServer()).toBeGreaterThan(0);
    raw.child.kill('SIGKILL');
    await raw.exited;
    const canceled = await other.callTool({ name: 'slow__cancellations', arguments: {} });
    expect(Number(textOf(canceled))).toBeGreaterThan(0);
  });

  it.each(['legacy', 'modern'] as const)(
    'an HTTP consumer that goes away mid-call has its backing call cancelled (%s)',
    async (era) => {
      const ws = makeE2eWorkspace();
      servers(ws);
      const gateway = await httpGateway(ws);
      const client = await httpConsumer(gateway, { era });
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => (started = resolve));
      const call = client
        .callTool({ name: 'slow__wait', arguments: {} }, { onprogress: () => started() })
        .catch(() => 'gone');
      await running;
      await client.close();
      expect(await call).toBe('gone');
      const other = await stdioConsumer(ws, { name: 'other' });
      const canceled = await other.callTool({ name: 'slow__cancellations', arguments: {} });
      expect(Number(textOf(canceled))).toBe(1);
    },
  );

  it('a message over 4 MiB is dropped with an error; a 1 MiB argument goes through', async () => {
    const ws = makeE2eWorkspace();
    servers(ws);
    const raw = rawServe(ws);
    await raw.initialize();
    const huge = 'x'.repeat(5 * 1024 * 1024);
    raw.send({
      id: 'huge',
      method: 'tools/call',
      params: { name: 'echo__say', arguments: { text: huge } },
    });
    expect(
      (await raw.next((m) => m.error?.code === -32600 && m.id === null)).error?.message,
    ).toContain('over 4 MiB');
    const big = 'y'.repeat(1024 * 1024);
    raw.send({
      id: 'big',
      method: 'tools/call',
      params: { name: 'echo__say', arguments: { text: big } },
    });
    const answer = await raw.next((m) => m.id === 'big');
    expect(JSON.stringify(answer.result)).toContain('yyyy');
  });

  it('a backing server that crashes mid-call: a tool error, the server restarted, others unaffected', async () => {
    const ws = makeE2eWorkspace();
    servers(ws);
    // Each list_changed (the server gone, then ready again) wakes the next try.
    let heard: () => void = () => {};
    const next = () => new Promise<void>((resolve) => (heard = resolve));
    let changed = next();
    const client = await stdioConsumer(ws, {
      setup: (c) =>
        c.setNotificationHandler('notifications/tools/list_changed', () => {
          heard();
          changed = next();
        }),
    });
    const other = await stdioConsumer(ws, { name: 'other' });
    const crashed = await client.callTool({ name: 'crash__crash', arguments: { code: 3 } });
    expect(crashed.isError).toBe(true);
    expect(textOf(crashed)).toMatch(/crash/);
    expect(textOf(await other.callTool({ name: 'echo__say', arguments: { text: 'ok' } }))).toBe(
      'ok',
    );
    // The daemon restarts it as usual: once it is back, the same consumer's call is answered.
    const ok = async () => textOf(await client.callTool({ name: 'crash__ok', arguments: {} }));
    while ((await ok()) !== 'fine') await changed;
    const status = await ws.runJson<McpStatusResult>(['mcp', 'status']);
    expect(status.servers.find((s) => s.name === 'crash')?.restarts).toBeGreaterThan(0);
  });

  it('HTTP without the token (or with a wrong one) gets 401 and nothing else', async () => {
    const ws = makeE2eWorkspace();
    const gateway = await httpGateway(ws);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tries: Record<string, string>[] = [{}, { Authorization: 'Bearer wrong-token-wrong' }];
    for (const headers of tries) {
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body,
      });
      expect(response.status).toBe(401);
      expect(await response.text()).toBe('');
    }
    // fetch will not send another Host: node:http does, as a DNS-rebinding page's request would.
    const rebinding = await new Promise<{ status: number }>((resolve, reject) => {
      const request = http.request(gateway.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${gateway.token}`,
          Host: 'evil.example.com',
        },
      });
      request.on('response', (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0 });
      });
      request.on('error', reject);
      request.end(body);
    });
    expect(rebinding.status).toBe(403);
  });

  it('a requestState tampered with, or of an earlier round, is refused; the latest one still goes on', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      `mcpServers:\n${fixtureYaml('conformance', 'conformance-reference', '    trust: true\n')}`,
    );
    const gateway = await httpGateway(ws, ['--server', 'conformance']);
    type Answer = {
      result?: { resultType?: string; requestState?: string; inputRequests?: object };
      error?: { code: number };
    };
    let id = 0;
    const call = async (extra: object = {}): Promise<Answer> => {
      const name = 'test_input_required_result_multi_round';
      const response = await fetch(gateway.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${gateway.token}`,
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/call',
          'Mcp-Name': name,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method: 'tools/call',
          params: {
            name,
            arguments: {},
            ...extra,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
            },
          },
        }),
      });
      return (await response.json()) as Answer;
    };
    const answer = (round: Answer, content: object) => ({
      inputResponses: Object.fromEntries(
        Object.keys(round.result!.inputRequests!).map((key) => [
          key,
          { action: 'accept', content },
        ]),
      ),
      requestState: round.result!.requestState,
    });
    const first = await call();
    expect(first.result?.resultType).toBe('input_required');
    const second = await call(answer(first, { name: 'Ann' }));
    expect(second.result?.resultType).toBe('input_required');
    expect(second.result?.requestState).not.toBe(first.result?.requestState);
    // Round 1's state again, and round 2's with a byte changed: both refused.
    expect((await call(answer(first, { name: 'Eve' }))).error?.code).toBe(-32602);
    const tampered = { ...answer(second, { color: 'red' }) };
    tampered.requestState = `${tampered.requestState!.slice(0, -2)}xx`;
    expect((await call(tampered)).error?.code).toBe(-32602);
    const done = await call(answer(second, { color: 'blue' }));
    expect(textOf(done.result)).toBe('Multi-round complete for Ann who likes blue');
  });
});
