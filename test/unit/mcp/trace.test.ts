import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ProtocolTrace, type TraceTap } from '../../../src/workers/mcp/trace.ts';

/** A transport that sends nowhere and receives what the test gives it (the trace's seam). */
class Wire implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  sent: JSONRPCMessage[] = [];
  start = async () => {};
  close = async () => {};
  send = async (message: JSONRPCMessage) => {
    this.sent.push(message);
  };
}

/** A transport that tells the trace each message's text itself, as `ProcessTransport` does. */
class TappedWire extends Wire {
  tap: TraceTap | undefined = undefined;
}

const request = (id: number, method = 'tools/call'): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method,
  params: { name: 'echo', arguments: { token: 'sekrit' } },
});
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { content: [] } });

const traceOf = () => new ProtocolTrace((text) => text.replaceAll('sekrit', '***'), undefined);

describe('the protocol trace', () => {
  it('pairs each answer with its request, wrapped round a transport, and redacts as entries leave', async () => {
    const trace = traceOf();
    const answers: string[] = [];
    trace.onAnswer = (method) => answers.push(method);
    const wire = trace.attach(new Wire());
    const got: JSONRPCMessage[] = [];
    wire.onmessage = (message) => got.push(message);
    await wire.send(request(1));
    wire.onmessage(answer(1));
    wire.onmessage({ jsonrpc: '2.0', method: 'notifications/message', params: {} });
    expect(wire.sent).toHaveLength(1);
    expect(got).toHaveLength(2);
    expect(answers).toEqual(['tools/call']);
    const entries = trace.entries();
    expect(entries.map((e) => [e.seq, e.direction, e.kind, e.method, e.id])).toEqual([
      [1, 'out', 'request', 'tools/call', 1],
      [2, 'in', 'response', 'tools/call', 1],
      [3, 'in', 'notification', 'notifications/message', undefined],
    ]);
    expect(entries[0]!.body).toContain('***');
    expect(entries[0]!.body).not.toContain('sekrit');
    expect(entries[0]!.chars).toBe(JSON.stringify(request(1)).length);
    expect(entries[1]!.ms).toBeGreaterThanOrEqual(0);
    // Absent fields are left out, not carried as undefined.
    expect(Object.keys(entries[2]!)).not.toContain('id');
    expect(Object.keys(entries[2]!)).not.toContain('ms');
    expect(trace.entries(2).map((e) => e.seq)).toEqual([3]);
  });

  it('takes the text a tapping transport hands over, newline not counted, instead of wrapping it', async () => {
    const trace = traceOf();
    const wire = new TappedWire();
    const send = wire.send;
    expect(trace.attach(wire)).toBe(wire);
    expect(wire.send).toBe(send);
    const text = '{"jsonrpc":"2.0", "id":7, "method":"ping"}';
    wire.tap!('out', JSON.parse(text) as JSONRPCMessage, `${text}\n`);
    wire.tap!('in', answer(7), undefined);
    const [out, back] = trace.entries();
    expect(out).toMatchObject({ kind: 'request', method: 'ping', id: 7, chars: text.length });
    expect(out!.body).toBe(text);
    expect(back).toMatchObject({ kind: 'response', method: 'ping', id: 7 });
    expect(back!.body).toBe(JSON.stringify(answer(7)));
  });

  it('keeps the last 300 entries and cuts long bodies, counting their whole length', () => {
    const trace = traceOf();
    const wire = new TappedWire();
    trace.attach(wire);
    for (let id = 1; id <= 1000; id++) wire.tap!('out', request(id, 'ping'), undefined);
    const entries = trace.entries();
    expect(entries).toHaveLength(300);
    expect(entries[0]!.seq).toBe(701);
    expect(entries.at(-1)!.seq).toBe(1000);
    expect(trace.entries(990).map((e) => e.seq)).toEqual([
      991, 992, 993, 994, 995, 996, 997, 998, 999, 1000,
    ]);
    expect(trace.entries(1000)).toEqual([]);
    const long = 'x'.repeat(10_000);
    wire.tap!('in', { jsonrpc: '2.0', id: 1000, result: { long } }, undefined);
    const last = trace.entries(1000)[0]!;
    expect(last.chars).toBe(JSON.stringify({ jsonrpc: '2.0', id: 1000, result: { long } }).length);
    expect(last.body).toHaveLength(4001);
    expect(last.body.endsWith('…')).toBe(true);
    // Requests long unanswered are forgotten beyond the ring: the one answered here was the last.
    expect(last.method).toBe('ping');
    wire.tap!('in', answer(1), undefined);
    expect(trace.entries(1001)[0]!.method).toBeUndefined();
  });
});
