import type { IncomingMessage } from 'node:http';
import {
  parseJSONRPCMessage,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import WebSocket from 'ws';

interface WebSocketTransportOptions {
  /** Sent on the HTTP upgrade request (an `Authorization` header, say). */
  headers?: Record<string, string>;
  /** A frame that is not JSON-RPC: logged, never fatal. */
  onNoise?: (text: string, error: unknown) => void;
}

/** The subprotocol MCP servers over WebSocket accept. */
const SUBPROTOCOL = 'mcp';

/**
 * MCP over one WebSocket (`ws://` / `wss://`, subprotocol `mcp`): one JSON-RPC message per text
 * frame. The configured headers go on the upgrade request. A socket that drops closes the
 * transport; the connection around it reconnects with its restart backoff, as it does for a
 * server process that exits, since a server's session (its `initialize`) dies with the socket.
 */
export class WebSocketClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private socket: WebSocket | undefined;
  private closed = false;

  constructor(
    private readonly url: URL,
    private readonly options: WebSocketTransportOptions = {},
  ) {}

  start(): Promise<void> {
    if (this.socket) throw new Error('WebSocketClientTransport already started');
    const socket = new WebSocket(this.url, SUBPROTOCOL, {
      headers: this.options.headers ?? {},
      followRedirects: false,
    });
    this.socket = socket;
    return new Promise((resolve, reject) => {
      const refuse = (error: Error) => {
        socket.removeAllListeners('open');
        reject(error);
      };
      socket.once('unexpected-response', (_req, res: IncomingMessage) => {
        res.resume();
        refuse(
          new Error(
            `the WebSocket upgrade was refused with HTTP ${res.statusCode ?? '?'}${res.statusMessage ? ` ${res.statusMessage}` : ''}`,
          ),
        );
        socket.terminate();
      });
      socket.once('error', refuse);
      socket.once('open', () => {
        socket.off('error', refuse);
        socket.on('error', (error) => this.onerror?.(error));
        resolve();
      });
      socket.on('message', (data, isBinary) => this.receive(data, isBinary));
      socket.once('close', () => this.ended());
    });
  }

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    const text = Array.isArray(data)
      ? Buffer.concat(data).toString('utf8')
      : Buffer.from(data as ArrayBuffer).toString('utf8');
    let message: JSONRPCMessage;
    try {
      if (isBinary) throw new Error('a binary frame');
      message = parseJSONRPCMessage(JSON.parse(text));
    } catch (error) {
      this.options.onNoise?.(text.slice(0, 2000), error);
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN)
      return Promise.reject(new Error('Not connected'));
    return new Promise((resolve, reject) =>
      socket.send(JSON.stringify(message), (error) => (error ? reject(error) : resolve())),
    );
  }

  close(): Promise<void> {
    const socket = this.socket;
    if (!socket || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
      else socket.close(1000);
      // A peer that never answers the close frame is cut off.
      setTimeout(() => socket.terminate(), 1000).unref();
    });
  }

  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
