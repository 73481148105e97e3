import {
  isJSONRPCRequest,
  isJSONRPCResponse,
  parseJSONRPCMessage,
  type JSONRPCMessage,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';

/** Requests one consumer may have in flight; more are refused until answers come back. */
const MAX_IN_FLIGHT = 64;

/** JSON-RPC's implementation-defined server error: the flood refusal's code. */
const TOO_MANY = -32000;

const errorTo = (id: RequestId | null, code: number, message: string): JSONRPCMessage =>
  ({ jsonrpc: '2.0', id, error: { code, message } }) as JSONRPCMessage;

/** The `id` of a message that is not valid JSON-RPC, when it has a usable one. */
const idOf = (value: unknown): RequestId | null => {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
};

/**
 * The SDK `Transport` of a stdio consumer: its messages arrive as text from the front-end that
 * owns the consumer's pipes (`gateway/send`) and leave as text (`gateway/message`). What is not
 * JSON-RPC is answered here (-32700 parse error, -32600 invalid request) and never reaches the
 * server; a consumer with `MAX_IN_FLIGHT` requests unanswered gets -32000 for the next ones.
 */
export class RelayTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #inFlight = new Set<RequestId>();
  #closed = false;

  constructor(private readonly out: (text: string) => void) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    if (isJSONRPCResponse(message) && message.id !== undefined) this.#inFlight.delete(message.id);
    this.out(JSON.stringify(message));
  }

  /** One message from the consumer, as the text it sent. */
  receive(text: string): void {
    if (this.#closed) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return void this.send(errorTo(null, -32700, 'Parse error: the message is not JSON'));
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(parsed);
    } catch {
      return void this.send(
        errorTo(idOf(parsed), -32600, 'Invalid Request: not a JSON-RPC 2.0 message'),
      );
    }
    if (isJSONRPCRequest(message)) {
      if (this.#inFlight.size >= MAX_IN_FLIGHT)
        return void this.send(
          errorTo(
            message.id,
            TOO_MANY,
            `too many requests in flight (${MAX_IN_FLIGHT}); wait for answers before sending more`,
          ),
        );
      this.#inFlight.add(message.id);
    }
    this.onmessage?.(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}
