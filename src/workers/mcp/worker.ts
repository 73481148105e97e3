import { availableParallelism } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type {
  McpElicitationAnswer,
  McpEvent,
  McpRequest,
  McpSamplingAnswer,
  McpWorkerData,
} from '../protocol/mcp.ts';
import { toWire } from '../protocol/wire-error.ts';
import { BusyPoll } from './busy-poll.ts';
import { ambiguousCaller, relatedCall } from './call-scope.ts';
import { McpManager } from './manager.ts';

// The MCP worker thread: owns every MCP client; answers requests from main, pushes events.
if (!parentPort) throw new Error('the MCP worker must run in a worker thread');
const port = parentPort;
const data = workerData as McpWorkerData;

// Half a millisecond of polling after each request from main and each answer to it: what follows
// soon (the server's answer, main's next call) is taken without a thread wake-up (see BusyPoll).
// Not after events (progress, logs, status): a server that streams them would keep the thread
// spinning through a long call for nothing. With a single core there is never one to spare.
const poll = new BusyPoll(availableParallelism() > 1 ? 0.5 : 0);

// Events leave one by one, as they happen (see RpcChannel.send for why never in batches).
const post = (event: McpEvent) => port.postMessage(event);

/** An answer to one of main's requests. */
const answer = (event: Extract<McpEvent, { type: 'result' | 'error' }>) => {
  post(event);
  poll.touch();
};

let nextAsk = 1;
const asks = new Map<number, (answer: never) => void>();

/** Sends a server's request to main and waits for its answer (or the server's cancellation). */
const ask = <A>(
  event: (requestId: number) => McpEvent,
  signal: AbortSignal,
  ifCanceled: A,
): Promise<A> =>
  new Promise<A>((resolve) => {
    const requestId = nextAsk++;
    const onAbort = () => {
      asks.delete(requestId);
      resolve(ifCanceled);
    };
    asks.set(requestId, (answer: A) => {
      signal.removeEventListener('abort', onAbort);
      asks.delete(requestId);
      resolve(answer);
    });
    signal.addEventListener('abort', onAbort, { once: true });
    post(event(requestId));
  });

/** Who made the call a request of `server` belongs to, as the engine numbered them. */
const askerOf = (server: string): { asker?: number } => {
  const asker = relatedCall(server)?.asker;
  return asker === undefined ? {} : { asker };
};

/** Why a request of `server` that could be any of several callers' is declined. */
const ambiguous = (server: string) =>
  `niffler cannot tell which caller's call ${server} asks for (calls of more than one are in flight, and the request names none); declined`;

const manager = new McpManager(data, post, (server) => ({
  elicit: (elicitation, signal) =>
    ambiguousCaller(server)
      ? Promise.resolve({ action: 'decline', reason: ambiguous(server) })
      : ask<McpElicitationAnswer>(
          (requestId) => ({
            type: 'elicitation-request',
            requestId,
            server,
            elicitation,
            ...askerOf(server),
          }),
          signal,
          { action: 'cancel', reason: 'the server canceled the request' },
        ),
  sample: (params, signal) =>
    ambiguousCaller(server)
      ? Promise.resolve({ ok: false, reason: ambiguous(server) })
      : ask<McpSamplingAnswer>(
          (requestId) => ({
            type: 'sampling-request',
            requestId,
            server,
            params,
            ...askerOf(server),
          }),
          signal,
          { ok: false, reason: 'the server canceled the request' },
        ),
}));

const running = new Map<number, AbortController>();

const handle = async (
  request: Exclude<
    McpRequest,
    { type: 'cancel' | 'elicitation-answer' | 'sampling-answer' | 'call-tool' }
  >,
  signal: AbortSignal,
): Promise<unknown> => {
  switch (request.type) {
    case 'status':
      return manager.status();
    case 'list-tools':
      return manager.listTools();
    case 'list-prompts':
      return manager.listPrompts();
    case 'list-resources':
      return manager.listResources();
    case 'list-resource-templates':
      return manager.listResourceTemplates();
    case 'complete':
      return manager.complete(
        request.server,
        request.ref,
        request.argument,
        request.context,
        signal,
      );
    case 'get-trace':
      return manager.trace(request.server, request.since);
    case 'invalidate-cache':
      manager.invalidateCache();
      return {};
    case 'read-resource':
      return manager.readResource(request.server, request.uri, signal);
    case 'get-prompt':
      return manager.getPrompt(request.server, request.prompt, request.args, signal);
    case 'start':
      return manager.start(request.server);
    case 'stop':
      return manager.stop(request.server);
    case 'restart':
      return manager.restart(request.server);
    case 'update-servers':
      return manager.updateServers(request.servers);
    case 'set-roots':
      return { notified: await manager.setRoots(request.roots) };
    case 'set-log-level':
      await manager.setLogLevel(request.level);
      return {};
    case 'set-output-limit':
      manager.setOutputLimit(request.maxChars);
      return {};
    case 'forward':
      return manager.forward(request.server, request.method, request.params, signal, request.asker);
    case 'set-log-forwarding':
      manager.setLogForwarding(request.on);
      return {};
    case 'shutdown':
      await manager.shutdown();
      return {};
  }
};

const reply = (id: number, value: unknown) => {
  running.delete(id);
  answer({ type: 'result', id, value });
};

const run = (
  request: Exclude<McpRequest, { type: 'cancel' | 'elicitation-answer' | 'sampling-answer' }>,
) => {
  const controller = new AbortController();
  running.set(request.id, controller);
  if (request.type === 'call-tool') {
    // The hot path: `callTool` never rejects, so one continuation is all a call needs.
    void manager
      .callTool(request.name, request.args, {
        signal: controller.signal,
        ...(request.asker !== undefined ? { asker: request.asker } : {}),
        ...(request.progress
          ? { onProgress: (p) => post({ type: 'progress', id: request.id, ...p }) }
          : {}),
      })
      .then((result) => reply(request.id, result));
    return;
  }
  handle(request, controller.signal)
    .then(
      (value) => reply(request.id, value),
      (error: unknown) => {
        running.delete(request.id);
        answer({ type: 'error', id: request.id, error: toWire(error, 'mcp-call') });
      },
    )
    .finally(() => {
      if (request.type !== 'shutdown') return;
      port.close();
    });
};

const receive = (request: McpRequest) => {
  poll.touch();
  switch (request.type) {
    case 'cancel':
      running.get(request.id)?.abort();
      return;
    case 'elicitation-answer':
    case 'sampling-answer':
      asks.get(request.requestId)?.(request.answer as never);
      return;
    default:
      run(request);
  }
};

port.on('message', receive);

// If the thread is torn down without a shutdown request, no server process outlives it.
process.on('exit', () => manager.killAll());

// Ready first: main goes on (its socket, its engine) while the servers are being spawned; its
// requests are read only after they all have been.
post({ type: 'ready' });
manager.startAll();
