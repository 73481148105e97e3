import type { MessageConnection } from 'vscode-jsonrpc/node';
import {
  CancellationTokenSource,
  ResponseError,
  type CancellationToken,
} from 'vscode-jsonrpc/node';
import { NifflerError, fromWire, toWire, type WireError } from '../errors.ts';
import { HEARTBEAT_MS } from './deadline.ts';
import {
  WIRE_ERROR_CODE,
  type AttachedClient,
  type ClientCalls,
  type EngineCalls,
  type EngineHandlers,
  type EngineMethod,
  type FrontendNotification,
  type FrontendNotifications,
} from '../protocol.ts';
import { whenAborted } from '../../workers/shared/abort.ts';

/**
 * Every method of `EngineCalls`, the socket serves: a method added to `EngineCalls` and not here
 * (or here and not there) is a compile error, so none can be left unserved.
 */
const SERVED: { [M in keyof EngineCalls]: true } = {
  hello: true,
  'daemon/status': true,
  'daemon/stop': true,
  'mcp/status': true,
  'mcp/start': true,
  'mcp/stop': true,
  'mcp/restart': true,
  'mcp/login': true,
  'mcp/logout': true,
  'mcp/tools': true,
  'mcp/call': true,
  'mcp/prompts': true,
  'mcp/prompt': true,
  'mcp/resources': true,
  'mcp/read': true,
  'mcp/complete': true,
  'mcp/trace': true,
  'lsp/status': true,
  'session/open': true,
  'session/prompt': true,
  'session/list': true,
  'session/search': true,
  'session/compact': true,
  'session/context': true,
  'session/undo': true,
  'session/toggle': true,
  'session/agent': true,
  'extensions/list': true,
  'task/list': true,
  'task/run': true,
  'task/history': true,
  'config/reload': true,
  'trust/accept': true,
  'gateway/open': true,
  'gateway/listen': true,
};
const METHODS = Object.keys(SERVED) as EngineMethod[];

const FRONTEND_NOTIFICATIONS: FrontendNotification[] = ['gateway/send'];

let nextClientId = 1;

/**
 * Registers request handlers on `connection` whose signal aborts when the caller cancels or the
 * connection closes: vscode-jsonrpc cancels nothing by itself when the other end goes away. One
 * registry per connection; the daemon serves the engine with it, a front-end its own requests.
 */
export const requestHandlers = (connection: MessageConnection) => {
  const inFlight = new Set<AbortController>();
  connection.onClose(() => {
    for (const controller of inFlight) controller.abort();
  });
  return <P, R>(method: string, handler: (params: P, signal: AbortSignal) => Promise<R>): void => {
    connection.onRequest(method, async (params: P, token: CancellationToken) => {
      const controller = new AbortController();
      inFlight.add(controller);
      const subscription = token.onCancellationRequested(() => controller.abort());
      try {
        return await handler(params, controller.signal);
      } finally {
        inFlight.delete(controller);
        subscription.dispose();
      }
    });
  };
};

/**
 * Serves the engine on one JSON-RPC connection (a socket client or an in-process port). Errors
 * travel as `WireError` data; a notification to a slow or gone client never blocks others.
 */
export const serveConnection = (
  connection: MessageConnection,
  engine: EngineHandlers,
): AttachedClient => {
  const client: AttachedClient = {
    id: nextClientId++,
    notify: (name, params) => {
      // A client that went away is skipped (its close handler detaches it): vscode-jsonrpc throws
      // at once on a closed connection, and rejects when the write fails later.
      try {
        connection.sendNotification(name, params).catch(() => {});
      } catch {
        // closed
      }
    },
    ask: (method, params, signal) =>
      sendUntilClosed<ClientCalls[typeof method]['result']>(
        connection,
        method,
        params,
        signal,
        () => new NifflerError('daemon-unreachable', 'the front-end went away'),
      ),
  };
  // What this front-end asked for stops when it goes away (a killed terminal's turn, say).
  const handle = requestHandlers(connection);
  const heartbeat = heartbeatWhileBusy(client);
  for (const method of METHODS)
    handle(method, async (params: unknown, signal) => {
      heartbeat.begin();
      try {
        return await engine.handle(method, params ?? {}, { client, signal });
      } catch (error) {
        const wire = toWire(error);
        delete wire.stack;
        return new ResponseError<WireError>(WIRE_ERROR_CODE, wire.message, wire);
      } finally {
        heartbeat.end();
      }
    });
  for (const name of FRONTEND_NOTIFICATIONS)
    connection.onNotification(name, (params: FrontendNotifications[typeof name]) =>
      engine.receive?.(name, params, client),
    );
  const detach = engine.attach(client);
  connection.onClose(() => {
    heartbeat.stop();
    detach();
  });
  connection.listen();
  return client;
};

/** Tells `client` it is alive every `HEARTBEAT_MS` while any of its requests is in flight. */
const heartbeatWhileBusy = (client: AttachedClient) => {
  let busy = 0;
  let timer: NodeJS.Timeout | undefined;
  return {
    begin: () => {
      if (busy++ === 0)
        timer = setInterval(() => client.notify('daemon/heartbeat', {}), HEARTBEAT_MS);
    },
    end: () => {
      if (--busy === 0) clearInterval(timer);
    },
    stop: () => clearInterval(timer),
  };
};

/**
 * Sends one request on `connection`: `signal` cancels it (`$/cancelRequest`), and it rejects with
 * `closedError()` when the connection closes first (vscode-jsonrpc would leave it pending).
 */
export const sendUntilClosed = async <R>(
  connection: MessageConnection,
  method: string,
  params: unknown,
  signal: AbortSignal | undefined,
  closedError: () => Error,
  isClosed = false,
): Promise<R> => {
  const source = new CancellationTokenSource();
  const offAbort = whenAborted(signal, () => source.cancel());
  let onClose = { dispose: () => {} };
  const closed = new Promise<never>((_resolve, reject) => {
    const fail = () => reject(closedError());
    if (isClosed) fail();
    else onClose = connection.onClose(fail);
  });
  closed.catch(() => {}); // observed by the race below, or not needed at all
  try {
    return (await Promise.race([
      connection.sendRequest(method, params, source.token),
      closed,
    ])) as R;
  } finally {
    onClose.dispose();
    offAbort();
    source.dispose();
  }
};

/** Turns a JSON-RPC error from the engine back into a `NifflerError`. */
export const fromResponseError = (error: unknown): NifflerError => {
  if (error instanceof NifflerError) return error;
  if (error instanceof ResponseError && error.code === WIRE_ERROR_CODE && error.data)
    return fromWire(error.data as WireError);
  const message = error instanceof Error ? error.message : String(error);
  return new NifflerError(
    'daemon-unreachable',
    `the daemon connection failed: ${message}; run niffler daemon status, or retry`,
    {},
    { cause: error },
  );
};
