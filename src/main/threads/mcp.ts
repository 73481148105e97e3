import type { Worker } from 'node:worker_threads';
import { NifflerError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type {
  McpCalls,
  McpElicitation,
  McpElicitationAnswer,
  McpEvent,
  McpForwardMethod,
  McpForwardResult,
  McpLogLevel,
  McpPromptInfo,
  McpRequest,
  McpResourceInfo,
  McpResourceTemplateInfo,
  McpSamplingAnswer,
  McpSamplingParams,
  McpServerSpec,
  McpServerStatus,
  McpToolInfo,
  McpTraceEntry,
  McpWorkerData,
  McpWorkerInit,
} from '../../workers/protocol/mcp.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import { killGroup } from '../../workers/shared/process-group.ts';
import { exitCause, startWorker } from './entry.ts';
import { RpcChannel, type RpcProgress } from './rpc.ts';
import { whenAborted } from '../../workers/shared/abort.ts';

export { mcpWorkerData } from './mcp-spec.ts';

/** Push events of the host (replies are consumed by the RPC layer). */
export type McpHostEvent =
  | Extract<
      McpEvent,
      {
        type: 'status' | 'tools-changed' | 'prompts-changed' | 'resources-changed' | 'server-log';
      }
    >
  | { type: 'worker-exit'; error: NifflerError; restarting: boolean };

type ElicitationHandler = (request: {
  server: string;
  elicitation: McpElicitation;
}) => Promise<McpElicitationAnswer>;
type SamplingHandler = (request: {
  server: string;
  params: McpSamplingParams;
}) => Promise<McpSamplingAnswer>;

export interface McpHostOptions {
  logger?: Logger;
  /** Default timeout of non-call requests (status, start…); default 60 s. */
  requestTimeoutMs?: number;
  /** Respawn the worker when it dies after start-up; default true. */
  respawn?: boolean;
}

export interface CallToolOptions {
  signal?: AbortSignal;
  onProgress?: (progress: RpcProgress) => void;
  /** Answers the server's elicitations during this call (instead of the host's handler). */
  onElicit?: ElicitationHandler;
  /** Answers the server's sampling requests during this call (instead of the host's handler). */
  onSample?: SamplingHandler;
}

const NO_UI = 'no user interface is attached to answer it';

const toCallFailure = (error: unknown): ToolResult => {
  const e = error instanceof NifflerError ? error : new NifflerError('internal', String(error));
  const code =
    e.code === 'canceled' ? 'canceled' : e.code === 'worker-exited' ? 'server-crashed' : 'internal';
  return { ok: false, error: { code, message: e.message } };
};

/** An MCP worker started ahead of its data (McpHost.boot). */
export interface BootedMcpWorker {
  readonly worker: Worker;
  exited: boolean;
}

/**
 * Owns the MCP worker thread: typed requests, push events, server-initiated elicitation and
 * sampling (declined with a reason when no handler answers), respawn on a crash, and `close()`
 * that leaves no server process behind. Start it with `McpHost.start(data)`.
 */
export class McpHost {
  private worker!: Worker;
  private rpc!: RpcChannel<McpCalls>;
  private readonly listeners = new Set<(event: McpHostEvent) => void>();
  private readonly statuses = new Map<string, McpServerStatus>();
  private readonly pids = new Map<string, number>();
  private elicitation: ElicitationHandler | undefined;
  private sampling: SamplingHandler | undefined;
  /** Per-call handlers of the server's requests, by the call's `asker` number. */
  private readonly askers = new Map<number, Pick<CallToolOptions, 'onElicit' | 'onSample'>>();
  private nextAsker = 1;
  private closing: Promise<void> | undefined;
  #toolsVersion = 0;
  /** What the live catalogs that replaced kept ones changed, by the tools version they came at. */
  readonly #revisions: { version: number; text: string }[] = [];
  private readonly onProcessExit = () => this.killServers('SIGKILL');

  private constructor(
    private data: McpWorkerData,
    private readonly options: McpHostOptions,
  ) {}

  /**
   * Starts the worker; resolves once it runs (servers keep starting in the background). With a
   * `booted` worker (McpHost.boot), that one is given its data instead.
   */
  static async start(
    data: McpWorkerData,
    options: McpHostOptions = {},
    booted?: BootedMcpWorker,
  ): Promise<McpHost> {
    const host = new McpHost(data, options);
    await host.spawn(booted);
    process.on('exit', host.onProcessExit);
    return host;
  }

  /**
   * Starts the MCP worker before its data is known: it loads the MCP client code while the caller
   * reads the config, and waits for `start(data, options, booted)`. A cold daemon's first step,
   * so that its servers spawn as early as they can.
   */
  static boot(): BootedMcpWorker {
    const worker = startWorker('mcp');
    const booted: BootedMcpWorker = { worker, exited: false };
    worker.once('exit', () => (booted.exited = true));
    return booted;
  }

  /** Subscribes to push events; returns the unsubscribe function. */
  on(listener: (event: McpHostEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Who answers `elicitation/create`; without one, requests are declined with a reason. */
  setElicitationHandler(handler: ElicitationHandler | undefined): void {
    this.elicitation = handler;
  }

  /** Who answers `sampling/createMessage`; without one, requests are declined with a reason. */
  setSamplingHandler(handler: SamplingHandler | undefined): void {
    this.sampling = handler;
  }

  /** Every server's status, with how its process is confined (from its spec). */
  async status(): Promise<McpServerStatus[]> {
    const statuses = await this.rpc.request('status', {});
    return statuses.map((status) => {
      const spec = this.data.servers.find((s) => s.name === status.name);
      return {
        ...status,
        ...(spec?.sandbox ? { sandbox: 'bwrap' as const } : {}),
        ...(spec?.limits ? { limits: spec.limits } : {}),
      };
    });
  }

  /** Goes up whenever a server's tools change: a list taken at one version holds until the next. */
  get toolsVersion(): number {
    return this.#toolsVersion;
  }

  listTools(): Promise<McpToolInfo[]> {
    return this.rpc.request('list-tools', {});
  }

  /**
   * Notices of the servers whose live tools, arriving after `version`, differed from the ones
   * kept from their last run (offered meanwhile): what a turn that offered them tells its user.
   */
  keptRevisionsSince(version: number | undefined): string[] {
    return this.#revisions
      .filter((r) => version === undefined || r.version > version)
      .map((r) => r.text);
  }

  listPrompts(): Promise<McpPromptInfo[]> {
    return this.rpc.request('list-prompts', {});
  }

  listResources(): Promise<McpResourceInfo[]> {
    return this.rpc.request('list-resources', {});
  }

  listResourceTemplates(): Promise<McpResourceTemplateInfo[]> {
    return this.rpc.request('list-resource-templates', {});
  }

  /** `completion/complete` for one argument of a prompt or resource template (none: empty). */
  complete(params: McpCalls['complete']['params']): Promise<McpCalls['complete']['result']> {
    return this.rpc.request('complete', params);
  }

  /** The protocol trace of `server` after sequence number `since`. */
  trace(server: string, since?: number): Promise<McpTraceEntry[]> {
    return this.rpc.request('get-trace', since !== undefined ? { server, since } : { server });
  }

  /** Forgets every cached tool result (a file of the workspace changed). */
  invalidateCache(): Promise<object> {
    return this.rpc.request('invalidate-cache', {});
  }

  readResource(server: string, uri: string, signal?: AbortSignal): Promise<ToolResult> {
    return this.rpc.request('read-resource', { server, uri }, signal ? { signal } : {});
  }

  getPrompt(
    server: string,
    prompt: string,
    args: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<ToolResult> {
    return this.rpc.request('get-prompt', { server, prompt, args }, signal ? { signal } : {});
  }

  /** The statuses last heard of, without asking the worker (what the system prompt reads). */
  knownStatuses(): McpServerStatus[] {
    return [...this.statuses.values()];
  }

  /**
   * Calls a tool by its model-facing name (`server__tool`). Never rejects: timeouts, cancellation,
   * crashed servers and a dead worker all come back as `{ ok: false, error }`.
   */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: CallToolOptions = {},
  ): Promise<ToolResult> {
    const { signal, onProgress } = options;
    const asker = this.askerFor(options);
    const waitMs = this.data.startupWaitMs;
    const params = {
      name,
      args,
      ...(onProgress ? { progress: true } : {}),
      ...(asker !== undefined ? { asker } : {}),
      ...(waitMs !== undefined ? { waitMs } : {}),
    };
    // The worker enforces the server's timeout (reset by progress) and always replies.
    const call = this.rpc
      .request('call-tool', params, { timeoutMs: 0, signal, onProgress })
      .catch(toCallFailure);
    return asker === undefined ? call : call.finally(() => this.askers.delete(asker));
  }

  /**
   * A request passed to `server` as it is; its result, or its JSON-RPC error, comes back whole.
   * The server's elicitations and sampling meanwhile go to `onElicit`/`onSample` when given.
   */
  forward(
    server: string,
    method: McpForwardMethod,
    params: Record<string, unknown>,
    options: Omit<CallToolOptions, 'onProgress'> = {},
  ): Promise<McpForwardResult> {
    const asker = this.askerFor(options);
    const request = this.rpc.request(
      'forward',
      { server, method, params, ...(asker !== undefined ? { asker } : {}) },
      options.signal ? { signal: options.signal } : {},
    );
    return asker === undefined ? request : request.finally(() => this.askers.delete(asker));
  }

  /** A number for a request with its own handlers of the server's requests (none without). */
  private askerFor(options: Pick<CallToolOptions, 'onElicit' | 'onSample'>): number | undefined {
    if (!options.onElicit && !options.onSample) return undefined;
    const asker = this.nextAsker++;
    this.askers.set(asker, { onElicit: options.onElicit, onSample: options.onSample });
    return asker;
  }

  /**
   * Tells a worker that defers its client code (`deferClient`) to load it now: the first request
   * of the cold start has been sent. Ignored by a worker that has it.
   */
  loadClient(): void {
    this.worker.postMessage({ type: 'load-client' } satisfies McpRequest);
  }

  /** Has the worker collect its garbage when no request of it runs (a quiet daemon). */
  collectGarbage(): void {
    this.worker.postMessage({ type: 'collect-garbage' } satisfies McpRequest);
  }

  /** Whether servers' log messages come as `server-log` events (off by default: they cost). */
  setLogForwarding(on: boolean): Promise<object> {
    return this.rpc.request('set-log-forwarding', { on });
  }

  startServer(server: string): Promise<McpServerStatus> {
    return this.rpc.request('start', { server });
  }

  /**
   * Starts `server` by hand and waits, without a time limit, until it is ready or has failed: an
   * OAuth authorization on the way may wait for the user (the URL is in its status, `authUrl`).
   */
  login(server: string, signal?: AbortSignal): Promise<McpServerStatus> {
    return this.rpc.request('start', { server }, { timeoutMs: 0, ...(signal ? { signal } : {}) });
  }

  stopServer(server: string): Promise<McpServerStatus> {
    return this.rpc.request('stop', { server });
  }

  restartServer(server: string): Promise<McpServerStatus> {
    return this.rpc.request('restart', { server });
  }

  /** Config reload: servers whose definition changed restart, new ones start, removed ones stop. */
  async updateServers(servers: McpServerSpec[]): Promise<McpCalls['update-servers']['result']> {
    this.data = { ...this.data, servers };
    const result = await this.rpc.request('update-servers', { servers });
    for (const name of this.statuses.keys())
      if (!servers.some((s) => s.name === name)) this.statuses.delete(name);
    return result;
  }

  /**
   * Config reload: takes the worker's state as `mcpWorkerData` builds it from the new config and
   * sends what differs from the current one (kept, too, for a respawned worker). Servers always go:
   * the worker restarts only those whose definition changed.
   */
  async reconfigure(next: McpWorkerData): Promise<McpCalls['update-servers']['result']> {
    const before = this.data;
    this.data = { ...this.data, startupWaitMs: next.startupWaitMs };
    const applied = await this.updateServers(next.servers);
    if (next.roots.join('\n') !== before.roots.join('\n')) await this.setRoots(next.roots);
    if (next.logLevel !== before.logLevel) await this.setLogLevel(next.logLevel);
    if (next.maxOutputChars !== undefined && next.maxOutputChars !== before.maxOutputChars)
      await this.setOutputLimit(next.maxOutputChars);
    return applied;
  }

  /** New roots (workspace root plus allowed paths); servers get `roots/list_changed`. */
  setRoots(roots: string[]): Promise<{ notified: string[] }> {
    this.data = { ...this.data, roots };
    return this.rpc.request('set-roots', { roots });
  }

  setLogLevel(level: McpLogLevel): Promise<object> {
    this.data = { ...this.data, logLevel: level };
    return this.rpc.request('set-log-level', { level });
  }

  /** `tools.output.maxChars` for MCP results, kept for a respawned worker too. */
  setOutputLimit(maxChars: number): Promise<object> {
    this.data = { ...this.data, maxOutputChars: maxChars };
    return this.rpc.request('set-output-limit', { maxChars });
  }

  /**
   * Resolves with the first status of `server` that satisfies `test` (the current one counts);
   * rejects when `signal` aborts.
   */
  waitForStatus(
    server: string,
    test: (status: McpServerStatus) => boolean,
    signal?: AbortSignal,
  ): Promise<McpServerStatus> {
    const current = this.statuses.get(server);
    if (current && test(current)) return Promise.resolve(current);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        off();
        reject(new NifflerError('canceled', `stopped waiting for server "${server}"`));
      };
      const off = this.on((event) => {
        if (event.type !== 'status' || event.status.name !== server || !test(event.status)) return;
        off();
        offAbort();
        resolve(event.status);
      });
      const offAbort = whenAborted(signal, onAbort);
    });
  }

  /** Stops every server (process groups ended) and the worker. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    try {
      await this.rpc.request('shutdown', {}, { timeoutMs: 15_000 });
      const timer = setTimeout(() => void this.worker.terminate(), 5_000);
      await exited;
      clearTimeout(timer);
    } catch {
      // The worker is gone or stuck: end it and the servers it leaves behind ourselves.
      await this.worker.terminate();
    }
    this.killServers('SIGKILL');
    process.off('exit', this.onProcessExit);
  }

  private spawn(booted?: BootedMcpWorker): Promise<void> {
    // A booted worker that died meanwhile (its code failed to load): the error says why.
    if (booted?.exited)
      return Promise.reject(
        new NifflerError(
          'worker-exited',
          `the MCP worker exited while starting${exitCause(booted.worker)}`,
        ),
      );
    const worker = booted?.worker ?? startWorker('mcp', this.data);
    if (booted) worker.postMessage({ type: 'init', data: this.data } satisfies McpWorkerInit);
    this.worker = worker;
    this.rpc = new RpcChannel<McpCalls>(worker, {
      defaultTimeoutMs: this.options.requestTimeoutMs,
    });
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      const receive = (event: McpEvent) => {
        if (event.type === 'ready') {
          ready = true;
          resolve();
          return;
        }
        this.receive(event);
      };
      worker.on('message', receive);
      worker.on('error', (error) =>
        this.options.logger?.error('mcp worker error', {
          error: error.message,
          stack: error.stack,
        }),
      );
      worker.once('exit', (code) => {
        const error = new NifflerError(
          'worker-exited',
          `the MCP worker exited with code ${code}${exitCause(worker)}`,
          { code },
        );
        this.rpc.rejectAll(error);
        if (!ready) return reject(error);
        if (this.closing) return;
        this.killServers('SIGTERM');
        const restarting = this.options.respawn !== false;
        this.emit({ type: 'worker-exit', error, restarting });
        this.options.logger?.error('mcp worker exited', { code, restarting });
        if (restarting)
          this.spawn().catch((e: unknown) =>
            this.emit({ type: 'worker-exit', error: e as NifflerError, restarting: false }),
          );
      });
    });
  }

  private receive(event: McpEvent): void {
    if (this.rpc.handle(event)) return;
    switch (event.type) {
      case 'ready':
      case 'result':
      case 'error':
      case 'progress':
        return;
      case 'status':
        this.statuses.set(event.status.name, event.status);
        if (event.status.pid !== null) this.pids.set(event.status.name, event.status.pid);
        else this.pids.delete(event.status.name);
        this.emit(event);
        return;
      case 'tools-changed':
        this.#toolsVersion++;
        if (event.kept) this.#noteRevision(event.server, event.kept);
        this.emit(event);
        return;
      case 'prompts-changed':
      case 'resources-changed':
      case 'server-log':
        this.emit(event);
        return;
      case 'log':
        this.options.logger?.[event.level](event.msg, { scope: 'mcp', ...event.data });
        return;
      case 'elicitation-request':
        this.answer(
          event.requestId,
          'elicitation-answer',
          async () => {
            const handler = this.askerOf(event.asker)?.onElicit ?? this.elicitation;
            return handler
              ? handler({ server: event.server, elicitation: event.elicitation })
              : { action: 'decline', reason: `elicitation declined: ${NO_UI}` };
          },
          (reason) => ({ action: 'decline', reason }),
        );
        return;
      case 'sampling-request':
        this.answer(
          event.requestId,
          'sampling-answer',
          async () => {
            const handler = this.askerOf(event.asker)?.onSample ?? this.sampling;
            return handler
              ? handler({ server: event.server, params: event.params })
              : { ok: false, reason: `sampling is not available: ${NO_UI}` };
          },
          (reason) => ({ ok: false, reason }),
        );
        return;
    }
  }

  #noteRevision(
    server: string,
    kept: NonNullable<Extract<McpEvent, { type: 'tools-changed' }>['kept']>,
  ): void {
    const words = [
      kept.added.length ? `new: ${kept.added.join(', ')}` : '',
      kept.removed.length ? `gone: ${kept.removed.join(', ')}` : '',
      kept.changed.length ? `changed: ${kept.changed.join(', ')}` : '',
    ].filter(Boolean);
    this.#revisions.push({
      version: this.#toolsVersion,
      text: `server "${server}" is ready, and its tools changed since the last run (${words.join('; ')}): the next request has them as they are now`,
    });
    // A few per server start; the oldest go (a turn asks only for those since it began).
    if (this.#revisions.length > 32) this.#revisions.shift();
  }

  private askerOf(asker: number | undefined) {
    return asker === undefined ? undefined : this.askers.get(asker);
  }

  private answer<A>(
    requestId: number,
    type: 'elicitation-answer' | 'sampling-answer',
    produce: () => Promise<A>,
    onError: (reason: string) => A,
  ): void {
    produce()
      .catch((error: unknown) => onError(`the handler failed: ${(error as Error).message}`))
      .then((answer) => this.worker.postMessage({ type, requestId, answer }))
      .catch(() => undefined); // the worker may be gone; its request died with it
  }

  private emit(event: McpHostEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  /** Ends the process groups of servers the worker reported (for a worker that died or hung). */
  private killServers(signal: NodeJS.Signals): void {
    // A group already gone is the normal case after a clean shutdown.
    for (const pid of this.pids.values()) killGroup(pid, signal);
    this.pids.clear();
  }
}
