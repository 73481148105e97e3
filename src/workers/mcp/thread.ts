import type { MessagePort } from 'node:worker_threads';
import type {
  McpElicitationAnswer,
  McpEvent,
  McpRequest,
  McpSamplingAnswer,
  McpWorkerData,
} from '../protocol/mcp.ts';
import { toWire } from '../protocol/wire-error.ts';
import { ambiguousCaller, relatedCall } from './call-scope.ts';
import { McpManager, type Side } from './manager.ts';
import type { KeptCatalogs } from './kept-catalog.ts';
import { whenAborted } from '../shared/abort.ts';
import { collectGarbage } from '../shared/gc.ts';

/** A request from main that is answered by a result (or an error). */
type Answered = Exclude<
  McpRequest,
  { type: 'cancel' | 'elicitation-answer' | 'sampling-answer' | 'load-client' | 'collect-garbage' }
>;

/** A request that starts, stops or reconfigures servers, or changes the worker's settings. */
type Control = Extract<
  Answered,
  {
    type:
      | 'invalidate-cache'
      | 'start'
      | 'stop'
      | 'restart'
      | 'update-servers'
      | 'set-roots'
      | 'set-log-level'
      | 'set-output-limit'
      | 'set-log-forwarding'
      | 'shutdown';
  }
>;

/** Who made the call a request of `server` belongs to, as the engine numbered them. */
const askerOf = (server: string): { asker?: number } => {
  const asker = relatedCall(server)?.asker;
  return asker === undefined ? {} : { asker };
};

/** Why a request of `server` that could be any of several callers' is declined. */
const ambiguous = (server: string) =>
  `niffler cannot tell which caller's call ${server} asks for (calls of more than one are in flight, and the request names none); declined`;

/**
 * The MCP worker thread's work, once its data is known (see worker.ts): owns every MCP client;
 * answers requests from main on `port`, pushes events to it, and asks main what servers ask of
 * the user (elicitation) or of the model (sampling).
 */
export class McpWorkerThread {
  readonly #manager: McpManager;
  readonly #running = new Map<number, AbortController>();
  readonly #asks = new Map<number, (answer: never) => void>();
  #nextAsk = 1;

  constructor(
    private readonly port: MessagePort,
    data: McpWorkerData,
    private readonly early: { kept?: KeptCatalogs; held?: McpRequest[] } = {},
  ) {
    this.#manager = new McpManager(data, this.#post, (server) => this.#side(server), early.kept);
  }

  /** How a server's requests of the user (elicitation) and of the model (sampling) reach main. */
  #side(server: string): Side {
    return {
      elicit: (elicitation, signal) =>
        ambiguousCaller(server)
          ? Promise.resolve({ action: 'decline', reason: ambiguous(server) })
          : this.#ask<McpElicitationAnswer>(
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
          : this.#ask<McpSamplingAnswer>(
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
    };
  }

  /**
   * Listens to main, says `ready` (or, after the early answers, `serving`), and starts the servers; then
   * takes the requests held back while the client code loaded.
   */
  serve(): void {
    this.port.on('message', this.#receive);
    // If the thread is torn down without a shutdown request, no server process outlives it.
    process.on('exit', () => this.#manager.killAll());
    // Ready first: main goes on (its socket, its engine) while the servers are being spawned; its
    // requests are read only after they all have been.
    this.#post({ type: this.early.held ? 'serving' : 'ready' });
    this.#manager.startAll();
    for (const request of this.early.held ?? []) this.#receive(request);
  }

  // Events leave one by one, as they happen (see RpcChannel.send for why never in batches).
  readonly #post = (event: McpEvent): void => this.port.postMessage(event);

  /** An answer to one of main's requests. */
  #answer(event: Extract<McpEvent, { type: 'result' | 'error' }>): void {
    this.#running.delete(event.id);
    this.#post(event);
  }

  /** Sends a server's request to main and waits for its answer (or the server's cancellation). */
  #ask<A>(event: (requestId: number) => McpEvent, signal: AbortSignal, ifCanceled: A): Promise<A> {
    if (signal.aborted) return Promise.resolve(ifCanceled);
    return new Promise<A>((resolve) => {
      const requestId = this.#nextAsk++;
      this.#asks.set(requestId, (answer: A) => {
        offAbort();
        this.#asks.delete(requestId);
        resolve(answer);
      });
      const offAbort = whenAborted(signal, () => {
        this.#asks.delete(requestId);
        resolve(ifCanceled);
      });
      this.#post(event(requestId));
    });
  }

  readonly #receive = (request: McpRequest): void => {
    switch (request.type) {
      case 'cancel':
        this.#running.get(request.id)?.abort();
        return;
      case 'elicitation-answer':
      case 'sampling-answer':
        this.#asks.get(request.requestId)?.(request.answer as never);
        return;
      case 'load-client':
        return; // loaded already
      case 'collect-garbage':
        if (this.#running.size === 0) collectGarbage(request.always);
        return;
      default:
        this.#run(request);
    }
  };

  #run(request: Answered): void {
    const controller = new AbortController();
    this.#running.set(request.id, controller);
    if (request.type === 'call-tool') {
      // The hot path: `callTool` never rejects, so one continuation is all a call needs.
      void this.#manager
        .callTool(request.name, request.args, {
          signal: controller.signal,
          ...(request.asker !== undefined ? { asker: request.asker } : {}),
          ...(request.waitMs !== undefined ? { waitMs: request.waitMs } : {}),
          ...(request.progress
            ? { onProgress: (p) => this.#post({ type: 'progress', id: request.id, ...p }) }
            : {}),
        })
        .then((value) => this.#answer({ type: 'result', id: request.id, value }));
      return;
    }
    this.#handle(request, controller.signal)
      .then(
        (value) => this.#answer({ type: 'result', id: request.id, value }),
        (error: unknown) =>
          this.#answer({ type: 'error', id: request.id, error: toWire(error, 'mcp-call') }),
      )
      .finally(() => {
        if (request.type === 'shutdown') this.port.close();
      });
  }

  /** What each request other than a tool call does (a table: one line per request). */
  /** The requests that ask the servers something; the rest go to `#control`. */
  async #handle(request: Exclude<Answered, { type: 'call-tool' }>, signal: AbortSignal) {
    const manager = this.#manager;
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
      case 'read-resource':
        return manager.readResource(request.server, request.uri, signal);
      case 'get-prompt':
        return manager.getPrompt(request.server, request.prompt, request.args, signal);
      case 'forward':
        return manager.forward(
          request.server,
          request.method,
          request.params,
          signal,
          request.asker,
        );
      default:
        return this.#control(request);
    }
  }

  /** The requests that start, stop or reconfigure the servers, or change the worker's settings. */
  async #control(request: Control) {
    const manager = this.#manager;
    switch (request.type) {
      case 'invalidate-cache':
        manager.invalidateCache();
        return {};
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
      case 'set-log-forwarding':
        manager.setLogForwarding(request.on);
        return {};
      case 'shutdown':
        await manager.shutdown();
        return {};
    }
  }
}
