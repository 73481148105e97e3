import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  hostHeaderValidationResponse,
  isInitializeRequest,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  WebStandardStreamableHTTPServerTransport,
  type McpHttpHandler,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { Consumer } from './consumer.ts';
import type { GatewayDeps } from './deps.ts';
import { jsonRpcError, readBody, sendWebResponse, toWebRequest } from './node-http.ts';
import { gatewayServer } from './server.ts';
import { isLoopbackHost } from './token.ts';
import { whenAborted } from '../../workers/shared/abort.ts';

export interface ListenOptions {
  host: string;
  port: number;
  /** SHA-256 (hex) of the bearer token every request must carry. */
  tokenSha256: string;
  scope?: string;
}

/** What the listener needs of the gateway: its parts, and the consumer registry. */
interface ListenerHooks {
  deps: GatewayDeps;
  register(consumer: Consumer, close: () => Promise<void>): void;
  end(id: number, reason: string): Promise<void>;
}

/** HTTP requests in flight at once on one listener; more are answered 429. */
const MAX_IN_FLIGHT = 256;

/** True when `header` is `Bearer <token>` for the token whose SHA-256 is `sha256`. */
const authorized = (header: string | undefined, sha256: string): boolean => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const presented = createHash('sha256').update(match[1]!).digest();
  const expected = Buffer.from(sha256, 'hex');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
};

/**
 * The gateway over Streamable HTTP on one address: a bearer token on every request (401 and
 * nothing else without it), Host and Origin checked on loopback (DNS rebinding), 2026-07-28
 * requests served per request, 2025-era clients in sessions (so that the gateway can ask them).
 */
export class HttpListener {
  readonly #server = http.createServer((req, res) => void this.#serve(req, res));
  readonly #sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  readonly #byName = new Map<string, Consumer>();
  readonly #modern: McpHttpHandler;
  #inFlight = 0;
  url = '';

  private constructor(
    private readonly hooks: ListenerHooks,
    private readonly options: ListenOptions,
  ) {
    const consumerOf = (ctx: ServerContext) => this.#modernConsumer(ctx);
    this.#modern = createMcpHandler(gatewayServer(hooks.deps, consumerOf, 'http', options.scope), {
      legacy: 'reject',
      onerror: (error) => hooks.deps.log.debug('gateway http error', { error: error.message }),
    });
  }

  /** Listens on `host:port`; rejects with the bind error (EADDRINUSE, EACCES…). */
  static async start(hooks: ListenerHooks, options: ListenOptions): Promise<HttpListener> {
    const listener = new HttpListener(hooks, options);
    await new Promise<void>((resolve, reject) => {
      listener.#server.once('error', reject);
      listener.#server.listen(options.port, options.host, () => resolve());
    });
    const { port } = listener.#server.address() as AddressInfo;
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    listener.url = `http://${host}:${port}/mcp`;
    return listener;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  async #serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!authorized(req.headers.authorization, this.options.tokenSha256)) {
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer' }).end();
      return;
    }
    if (this.#inFlight >= MAX_IN_FLIGHT) {
      await sendWebResponse(jsonRpcError(429, -32000, 'too many requests in flight'), res);
      return;
    }
    this.#inFlight++;
    try {
      await sendWebResponse(await this.#answer(req, res), res);
    } catch (error) {
      this.hooks.deps.log.warn('gateway http request failed', { error: String(error) });
      if (!res.headersSent) res.writeHead(500).end();
      else res.end();
    } finally {
      this.#inFlight--;
    }
  }

  async #answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<Response> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/mcp' && path !== '/') return new Response('Not Found', { status: 404 });
    const body = await readBody(req);
    if (!body) return jsonRpcError(413, -32600, 'the request body is over 4 MiB');
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const request = toWebRequest(
      req,
      body,
      `http://${req.headers.host ?? 'localhost'}`,
      gone.signal,
    );
    const rejected = isLoopbackHost(this.options.host)
      ? (hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
        originValidationResponse(request, localhostAllowedOrigins()))
      : undefined;
    if (rejected) return rejected;
    if (await isLegacyRequest(request)) return this.#legacy(request, body, gone.signal);
    return this.#modern.fetch(request);
  }

  /**
   * A 2025-era request: in its session (a new one for `initialize`). A client that goes away
   * before the answer cancels what it asked (no stream is kept to resume).
   */
  async #legacy(request: Request, body: Buffer, gone: AbortSignal): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    let transport = id ? this.#sessions.get(id) : undefined;
    if (id && !transport) return jsonRpcError(404, -32001, 'Session not found');
    const parsed = parseBody(body);
    if (!transport) {
      if (request.method !== 'POST' || !parsed.some((m) => isInitializeRequest(m)))
        return jsonRpcError(400, -32000, 'Bad Request: no valid session; send initialize first');
      transport = await this.#open();
    }
    const requests = parsed.flatMap((m) => (isRequestWithId(m) ? [m.id] : []));
    const open = transport;
    // A client gone already: nothing would cancel what its requests start.
    if (gone.aborted) return jsonRpcError(400, -32000, 'the client disconnected');
    whenAborted(gone, () => {
      for (const requestId of requests)
        open.onmessage?.({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId, reason: 'the client disconnected' },
        });
    });
    return transport.handleRequest(request, {
      parsedBody: parsed.length === 1 ? parsed[0] : parsed,
    });
  }

  /** A new 2025-era session: its consumer, server and transport. */
  async #open(): Promise<WebStandardStreamableHTTPServerTransport> {
    const consumer = new Consumer('http', this.options.scope);
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void this.#sessions.set(sessionId, transport),
      });
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
      void this.hooks.end(consumer.id, 'its session ended');
    };
    const server = gatewayServer(this.hooks.deps, () => consumer, 'http', this.options.scope)();
    consumer.instances.add(server);
    this.hooks.register(consumer, () => transport.close());
    await server.connect(transport);
    return transport;
  }

  /** The consumer of a 2026-07-28 request: one per client name on this listener. */
  #modernConsumer(ctx: ServerContext): Consumer {
    const info = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[
      CLIENT_INFO_META_KEY
    ] as { name?: string } | undefined;
    const name = info?.name ?? 'unknown';
    let consumer = this.#byName.get(name);
    if (!consumer) {
      consumer = new Consumer('http', this.options.scope);
      this.#byName.set(name, consumer);
      const made = consumer;
      this.hooks.register(made, async () => void this.#byName.delete(name));
    }
    return consumer;
  }

  /** Tells the 2026-07-28 clients listening for changes (2025 sessions hear it from the gateway). */
  changed(parts: ReadonlySet<string>): void {
    if (parts.has('tools')) this.#modern.notify.toolsChanged();
    if (parts.has('prompts')) this.#modern.notify.promptsChanged();
    if (parts.has('resources')) this.#modern.notify.resourcesChanged();
  }

  /** Stops listening; every session and request in flight ends. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await this.#modern.close();
    await Promise.all([...this.#sessions.values()].map((t) => t.close().catch(() => {})));
  }
}

const parseBody = (body: Buffer): unknown[] => {
  try {
    const value: unknown = JSON.parse(body.toString('utf8') || 'null');
    return Array.isArray(value) ? value : value === null ? [] : [value];
  } catch {
    return [];
  }
};

const isRequestWithId = (m: unknown): m is { id: string | number; method: string } =>
  typeof m === 'object' &&
  m !== null &&
  'method' in m &&
  'id' in m &&
  (typeof (m as { id: unknown }).id === 'string' || typeof (m as { id: unknown }).id === 'number');
