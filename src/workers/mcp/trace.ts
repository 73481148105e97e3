import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import type { McpTraceEntry } from '../protocol/mcp.ts';
import { formatTraceEntry } from '../shared/trace-format.ts';

/** Entries kept per server. */
const RING = 300;
/** Characters of a body kept in an entry. */
const BODY_CHARS = 4000;

type OnMessage = NonNullable<Transport['onmessage']>;

/** A message's JSON cut at `BODY_CHARS`, and its whole length (one native stringify: cheap). */
const preview = (message: unknown): { body: string; chars: number } => {
  const json = JSON.stringify(message);
  return {
    body: json.length > BODY_CHARS ? `${json.slice(0, BODY_CHARS)}…` : json,
    chars: json.length,
  };
};

const kindOf = (message: JSONRPCMessage): McpTraceEntry['kind'] =>
  'method' in message
    ? 'id' in message
      ? 'request'
      : 'notification'
    : 'error' in message
      ? 'error'
      : 'response';

/**
 * A server's protocol trace: every JSON-RPC message in both directions (method, id, size, the
 * time a request took; bodies redacted and cut), the last `RING` of them, and each as a line of
 * the server's log when `toLog` is given (`mcpServers.X.trace: true`).
 */
export class ProtocolTrace {
  private readonly ring: McpTraceEntry[] = [];
  private seq = 0;
  /** Requests in flight, by direction and id: their method and when they were sent. */
  private readonly open = new Map<string, { method: string; at: number }>();
  /** Sees the result of each answer the server sends, with its request's method. */
  onAnswer: ((method: string, result: unknown) => void) | undefined;

  constructor(
    private readonly redact: (text: string) => string,
    private toLog: ((line: string) => void) | undefined,
  ) {}

  /** Turns logging each entry on or off (a config reload). */
  setLog(toLog: ((line: string) => void) | undefined): void {
    this.toLog = toLog;
  }

  /** Entries after sequence number `since` (all that are kept, without it), bodies redacted. */
  entries(since = 0): McpTraceEntry[] {
    // Redacted as they leave, not as they come: the ring lives in this thread's memory, as the
    // messages themselves do, and most entries are never read.
    return this.ring.filter((e) => e.seq > since).map((e) => ({ ...e, body: this.redact(e.body) }));
  }

  /** Records each message `transport` sends and receives; returns the transport. */
  attach<T extends Transport>(transport: T): T {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      this.record('out', message);
      return send(message, options);
    };
    const inner = Object.getOwnPropertyDescriptor(transport, 'onmessage');
    let handler: OnMessage | undefined;
    let traced: OnMessage | undefined;
    Object.defineProperty(transport, 'onmessage', {
      configurable: true,
      enumerable: true,
      get: () => (inner?.get ? inner.get.call(transport) : traced) as OnMessage | undefined,
      set: (next: OnMessage | undefined) => {
        handler = next;
        const deliver: OnMessage = (message, extra) => {
          this.record('in', message);
          handler?.(message, extra);
        };
        traced = next && deliver;
        inner?.set?.call(transport, traced);
      },
    });
    return transport;
  }

  private record(direction: McpTraceEntry['direction'], message: JSONRPCMessage): void {
    const at = Date.now();
    const kind = kindOf(message);
    const id = 'id' in message ? (message.id as string | number) : undefined;
    let method = 'method' in message ? message.method : undefined;
    let ms: number | undefined;
    if (kind === 'request') this.open.set(`${direction}:${id}`, { method: method!, at });
    if ((kind === 'response' || kind === 'error') && id !== undefined) {
      // An answer travels the other way from its request.
      const key = `${direction === 'in' ? 'out' : 'in'}:${id}`;
      const request = this.open.get(key);
      this.open.delete(key);
      if (request) {
        method = request.method;
        ms = at - request.at;
        if (direction === 'in' && 'result' in message) this.onAnswer?.(method, message.result);
      }
    }
    const { body, chars } = preview(message);
    const entry: McpTraceEntry = {
      seq: ++this.seq,
      at,
      direction,
      kind,
      ...(method !== undefined ? { method } : {}),
      ...(id !== undefined ? { id } : {}),
      chars,
      ...(ms !== undefined ? { ms } : {}),
      body,
    };
    this.ring.push(entry);
    if (this.ring.length > RING) this.ring.shift();
    if (this.open.size > RING) this.open.delete(this.open.keys().next().value!);
    // The log redacts each line it writes.
    this.toLog?.(formatTraceEntry(entry));
  }
}
