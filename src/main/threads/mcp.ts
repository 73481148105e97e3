import type { Worker } from 'node:worker_threads';
import type { NifflerError } from '../errors.ts';
import type {
  McpCalls,
  McpEvent,
  McpForwardMethod,
  McpForwardResult,
  McpLogLevel,
  McpPromptInfo,
  McpRequest,
  McpResourceInfo,
  McpResourceTemplateInfo,
  McpServerSpec,
  McpServerStatus,
  McpToolInfo,
  McpTraceEntry,
  McpWorkerData,
  McpWorkerInit,
} from '../../workers/protocol/mcp.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import { startWorker } from './entry.ts';
import { KeptRevisions } from './kept-revisions.ts';
import { McpAskers } from './mcp-askers.ts';
import { ServerStatuses, statusWhen, withConfinement } from './mcp-statuses.ts';
import {
  toCallFailure,
  type BootedMcpWorker,
  type CallToolOptions,
  type ElicitationHandler,
  type McpHostEvent,
  type McpHostOptions,
  type SamplingHandler,
} from './mcp-types.ts';
import { bootMcpWorker, bootedExit, endWorker, logWorkerErrors, workerExit } from './mcp-worker.ts';
import { RpcChannel } from './rpc.ts';

/**
 * Owns the MCP worker thread: typed requests, push events, server-initiated elicitation and
 * sampling (declined with a reason when no handler answers), respawn on a crash, and `close()`
 * that leaves no server process behind. Start it with `McpHost.start(data)`.
 */
export class McpHost {
  private worker!: Worker;
  private rpc!: RpcChannel<McpCalls>;
  private readonly listeners = new Set<(event: McpHostEvent) => void>();
  private readonly statuses = new ServerStatuses();
  private readonly askers = new McpAskers();
  private closing: Promise<void> | undefined;
  readonly #kept = new KeptRevisions();
  private readonly onProcessExit = () => this.statuses.killServers('SIGKILL');

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
    return bootMcpWorker();
  }

  /** Subscribes to push events; returns the unsubscribe function. */
  on(listener: (event: McpHostEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Who answers `elicitation/create`; without one, requests are declined with a reason. */
  setElicitationHandler(handler: ElicitationHandler | undefined): void {
    this.askers.elicitation = handler;
  }

  /** Who answers `sampling/createMessage`; without one, requests are declined with a reason. */
  setSamplingHandler(handler: SamplingHandler | undefined): void {
    this.askers.sampling = handler;
  }

  /** Every server's status, with how its process is confined (from its spec). */
  async status(): Promise<McpServerStatus[]> {
    const early = this.statuses.answer(this.data.servers);
    return withConfinement(early ?? (await this.rpc.request('status', {})), this.data.servers);
  }

  /** Goes up whenever a server's tools change: a list taken at one version holds until the next. */
  get toolsVersion(): number {
    return this.#kept.version;
  }

  listTools(): Promise<McpToolInfo[]> {
    return this.rpc.request('list-tools', {});
  }

  /**
   * Notices of the servers whose live tools, arriving after `version`, differed from the ones
   * kept from their last run (offered meanwhile): what a turn that offered them tells its user.
   */
  keptRevisionsSince(version: number | undefined): string[] {
    return this.#kept.since(version);
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
    return this.statuses.all();
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
    const asker = this.askers.for(options);
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
    return this.askers.until(asker, call);
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
    const asker = this.askers.for(options);
    const request = this.rpc.request(
      'forward',
      { server, method, params, ...(asker !== undefined ? { asker } : {}) },
      options.signal ? { signal: options.signal } : {},
    );
    return this.askers.until(asker, request);
  }

  /**
   * Tells a worker that defers its client code (`deferClient`) to load it now: the first request
   * of the cold start has been sent. Ignored by a worker that has it.
   */
  loadClient(): void {
    this.worker.postMessage({ type: 'load-client' } satisfies McpRequest);
  }

  /** Has the worker, if no request of it runs, collect its garbage: `always`, or if grown (gc.ts). */
  collectGarbage(always = false): void {
    this.worker.postMessage({ type: 'collect-garbage', always } satisfies McpRequest);
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
    this.statuses.keepOnly(servers);
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
    return statusWhen(this.statuses.get(server), (l) => this.on(l), server, test, signal);
  }

  /** Stops every server (process groups ended) and the worker. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    // If the worker was gone or stuck, the servers it leaves behind are ended here.
    await endWorker(this.worker, this.rpc);
    this.statuses.killServers('SIGKILL');
    process.off('exit', this.onProcessExit);
  }

  private spawn(booted?: BootedMcpWorker): Promise<void> {
    // A booted worker that died meanwhile (its code failed to load): the error says why.
    if (booted?.exited) return Promise.reject(bootedExit(booted));
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
          this.statuses.early(event.statuses);
          ready = true;
          resolve();
          return;
        }
        this.receive(event);
      };
      worker.on('message', receive);
      logWorkerErrors(worker, this.options.logger);
      worker.once('exit', (code) => {
        const error = workerExit(worker, code);
        this.rpc.rejectAll(error);
        if (!ready) return reject(error);
        if (this.closing) return;
        this.statuses.killServers('SIGTERM');
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
      case 'serving':
        return this.statuses.serving();
      case 'ready':
      case 'result':
      case 'error':
      case 'progress':
        return;
      case 'status':
        this.statuses.note(event.status);
        this.emit(event);
        return;
      case 'tools-changed':
        this.#kept.changed(event.server, event.kept);
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
      case 'sampling-request':
        this.askers.answer(event, (message) => this.worker.postMessage(message));
        return;
    }
  }

  private emit(event: McpHostEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }
}
