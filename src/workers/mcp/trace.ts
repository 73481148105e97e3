import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import type { McpTraceEntry } from '../protocol/mcp.ts';
import { formatTraceEntry } from '../shared/trace-format.ts';

/** Entries kept per server. */
const RING = 300;
/** Characters of a body kept in an entry. */
const BODY_CHARS = 4000;

type OnMessage = NonNullable<Transport['onmessage']>;

/**
 * A message's JSON cut at `BODY_CHARS`, and its whole length. `text` is the JSON the transport
 * wrote or read (a line: its newline is not counted), when it tells it (see `TraceTap`); else the
 * message is stringified here. A cut body is a copy: a slice of a long string keeps all of it alive,
 * and the ring would keep 300 such strings.
 */
const preview = (message: unknown, text: string | undefined): { body: string; chars: number } => {
  const json = text ?? JSON.stringify(message);
  const chars = json.endsWith('\n') ? json.length - 1 : json.length;
  if (chars <= BODY_CHARS)
    return { body: chars === json.length ? json : json.slice(0, chars), chars };
  const cut = Buffer.from(json.slice(0, BODY_CHARS), 'utf16le').toString('utf16le');
  return { body: `${cut}…`, chars };
};

/**
 * What a transport that reads and writes JSON text itself calls with each message and that text,
 * so the trace need not stringify it again: `ProcessTransport` has one (a `tap` property).
 */
export type TraceTap = (
  direction: McpTraceEntry['direction'],
  message: JSONRPCMessage,
  text: string | undefined,
) => void;

/** A transport with a `tap` slot (see `TraceTap`). */
const tappable = (transport: Transport): transport is Transport & { tap: TraceTap | undefined } =>
  'tap' in transport;

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
  /** The last `RING` entries, by `seq % RING`. */
  private readonly ring: McpTraceEntry[] = [];
  private seq = 0;
  /** Requests in flight, by direction and id: their entries (method, and when they went). */
  private readonly open = {
    out: new Map<unknown, McpTraceEntry>(),
    in: new Map<unknown, McpTraceEntry>(),
  };
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
    const first = Math.max(since, this.seq - Math.min(this.seq, RING)) + 1;
    const out: McpTraceEntry[] = [];
    for (let seq = first; seq <= this.seq; seq++)
      out.push(shown(this.ring[seq % RING]!, this.redact));
    return out;
  }

  /** Records each message `transport` sends and receives; returns the transport. */
  attach<T extends Transport>(transport: T): T {
    if (tappable(transport)) {
      transport.tap = (direction, message, text) => this.record(direction, message, text);
      return transport;
    }
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

  private record(
    direction: McpTraceEntry['direction'],
    message: JSONRPCMessage,
    text?: string,
  ): void {
    const at = Date.now();
    const kind = kindOf(message);
    const id = 'id' in message ? (message.id as string | number) : undefined;
    let method = 'method' in message ? message.method : undefined;
    let ms: number | undefined;
    if ((kind === 'response' || kind === 'error') && id !== undefined) {
      // An answer travels the other way from its request.
      const open = this.open[direction === 'in' ? 'out' : 'in'];
      const request = open.get(id);
      if (request) {
        open.delete(id);
        method = request.method;
        ms = at - request.at;
        if (direction === 'in' && 'result' in message) this.onAnswer?.(method!, message.result);
      }
    }
    const { body, chars } = preview(message, text);
    // One shape for every entry (absent fields undefined, left out as they are read): the ring's
    // entries live long enough to leave the young generation, and one shape keeps that cheap.
    const entry: McpTraceEntry = {
      seq: ++this.seq,
      at,
      direction,
      kind,
      method,
      id,
      chars,
      ms,
      body,
    };
    if (kind === 'request') {
      const open = this.open[direction];
      open.set(id, entry);
      if (open.size > RING) open.delete(open.keys().next().value);
    }
    this.ring[entry.seq % RING] = entry;
    // The log redacts each line it writes.
    this.toLog?.(formatTraceEntry(entry));
  }
}

/** An entry as it leaves: body redacted, absent fields left out. */
const shown = (e: McpTraceEntry, redact: (text: string) => string): McpTraceEntry => ({
  seq: e.seq,
  at: e.at,
  direction: e.direction,
  kind: e.kind,
  ...(e.method !== undefined ? { method: e.method } : {}),
  ...(e.id !== undefined ? { id: e.id } : {}),
  chars: e.chars,
  ...(e.ms !== undefined ? { ms: e.ms } : {}),
  body: redact(e.body),
});
