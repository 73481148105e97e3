import path from 'node:path';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { nifflerPaths, type NifflerPaths } from '../paths.ts';
import type {
  AttachedClient,
  EngineHandlers,
  RequestContext,
  EngineMethod,
  FrontendNotification,
  FrontendNotifications,
  GatewayConsumerStatus,
  EngineNotification,
  EngineNotifications,
  ParamsOf,
  ResultOf,
} from '../protocol.ts';
import { ApiHost, resolveModelSpec } from '../threads/api.ts';
import type { McpHost } from '../threads/mcp.ts';
import { mcpWorkerData } from '../threads/mcp-spec.ts';
import { beginEngine, type EngineOptions } from './boot.ts';
import { ToolsHost } from '../threads/tools.ts';
import { ApprovalStore } from './approvals.ts';
import { ConfigKeeper } from './config-keeper.ts';
import { ContextWindows } from './context/window.ts';
import { SnapshotStore } from './snapshots.ts';
import { watchEngineConfig } from './watch-config.ts';
import { prewarm, warmWhenIdle } from './prewarm.ts';
import { elicit, sample } from './requests.ts';
import { Session } from './session.ts';
import { daemonHandlers } from './daemon-handlers.ts';
import { sessionHandlers } from './session-handlers.ts';
import { SessionTable } from './session-table.ts';
import type { GatewayLinkDeps, GatewayPort } from './gateway-port.ts';
import type { SessionDeps } from './session-deps.ts';
import { releaseIndex } from './search-index.ts';
import { mcpHandlers, serverInstructions } from './mcp-handlers.ts';
import { uiHandlers } from './ui-handlers.ts';
import { extensionHandlers } from '../extensions/handlers.ts';
import { Semaphore } from '../extensions/subagents.ts';
import { TaskRunner } from '../extensions/task-runner.ts';
import { ConfigSchema, type Config } from '../config/schema.ts';
import { LspService } from '../lsp/service.ts';
import { lspHandlers } from '../lsp/handlers.ts';
import { VERSION as VERSION_VALUE } from '../version.ts';

/**
 * The engine: config (reloaded on change, last good kept), the three worker owners, sessions and
 * the requests of every attached front-end. Runs in the daemon or in-process.
 */
export class Engine implements EngineHandlers {
  readonly startedAt: number;
  readonly paths: NifflerPaths;
  readonly api: ApiHost;
  readonly approvals: ApprovalStore;
  /** Language servers: started when a session opens, diagnostics after edits, the `lsp` tool. */
  readonly lsp: LspService;
  #tools: ToolsHost | undefined;
  readonly #config: ConfigKeeper;
  readonly #clients = new Set<AttachedClient>();
  /** The sessions in memory, who opened them, the turns running on them. */
  readonly #sessions = new SessionTable(() => this.#sessionDeps());
  readonly #windows = new ContextWindows();
  #subagentSlots: Semaphore | undefined;
  #tasks: TaskRunner | undefined;
  #snapshotStore: SnapshotStore | undefined;
  /** The gateway (`niffler mcp serve`): its link, which makes it when its first consumer comes. */
  readonly #gateway: GatewayPort;

  get #snapshots(): SnapshotStore {
    this.#snapshotStore ??= new SnapshotStore(this.paths.snapshotsDir, this.options.root);
    return this.#snapshotStore;
  }
  #stopWatching: () => void = () => {};
  #stopWarming: () => void = () => {};
  #closed = false;

  private constructor(
    readonly options: EngineOptions,
    loaded: LoadedConfig | null,
    configError: string | null,
    readonly mcp: McpHost,
    api: ApiHost | undefined,
  ) {
    this.startedAt = options.startedAt ?? Date.now();
    this.#gateway = options.gateway(this.#gatewayDeps());
    this.paths = nifflerPaths(options.root, options.env);
    this.#config = new ConfigKeeper(
      options,
      {
        read: (loaded) => this.#tools?.configure(loaded.config.tools),
        failed: (error) => this.broadcast('config/changed', { ok: false, error, warnings: [] }),
        apply: (loaded) => this.#apply(loaded),
      },
      loaded,
      configError,
    );
    this.api = api ?? new ApiHost({ log: options.log.child({ scope: 'api' }) });
    this.approvals = new ApprovalStore(this.paths.approvalsFile, options.root);
    this.lsp = new LspService({
      root: options.root,
      daemon: options.socket !== null,
      paths: this.paths,
      env: options.env ?? process.env,
      log: options.log,
      loaded: () => this.#config.last,
      configError: () => this.#config.error,
      snapshots: () => this.#snapshots,
    });
    mcp.on((event) => {
      if (event.type === 'status') this.broadcast('mcp/status-changed', event.status);
      if (
        event.type === 'prompts-changed' ||
        event.type === 'resources-changed' ||
        event.type === 'tools-changed'
      )
        this.broadcast('mcp/catalog-changed', { server: event.server });
      this.#gateway.tell(event);
    });
    mcp.setElicitationHandler((request) =>
      elicit(this.#sessions.activeTurn(), request.server, request.elicitation),
    );
    mcp.setSamplingHandler((request) =>
      sample(
        {
          turn: this.#sessions.activeTurn(),
          config: () => this.config,
          env: this.options.env ?? process.env,
          api: this.api,
        },
        request.server,
        request.params,
      ),
    );
    this.#watch();
  }

  /**
   * Loads the config (a broken one is reported, not fatal) and starts the MCP worker — or takes
   * what `beginEngine` (boot.ts) began before this module loaded.
   */
  static async create(options: EngineOptions, start = beginEngine(options)): Promise<Engine> {
    const { loaded, configError } = start;
    const mcp = await start.mcp;
    const engine = new Engine(options, loaded, configError, mcp, start.api);
    await engine.approvals.load();
    // Schedules run in a daemon, never in a one-off in-process engine; once the daemon holds
    // the engine (scheduling tells its idle timer).
    if (options.socket !== null) setImmediate(() => engine.#scheduleTasks());
    return engine;
  }

  get loaded(): LoadedConfig | null {
    return this.#config.current();
  }

  get config(): Config {
    return this.#config.last?.config ?? ConfigSchema.parse({});
  }

  get configError(): string | null {
    return this.#config.error;
  }

  get clients(): number {
    return this.#clients.size;
  }

  get runningTurns(): number {
    return this.#sessions.running + (this.#tasks?.running ?? 0);
  }

  /** Tasks with a schedule: while there are any, the daemon stays up. */
  get scheduledTasks(): number {
    return this.#tasks?.scheduled ?? 0;
  }

  #scheduleTasks(): void {
    if (!this.#closed) this.tasks.schedule();
  }

  /** Runs tasks by hand and on their schedules. */
  get tasks(): TaskRunner {
    this.#tasks ??= new TaskRunner({
      dir: path.join(this.paths.home, 'task-runs', this.paths.key),
      newSession: (options) => Session.create(this.#sessionDeps(), options),
      loaded: () => this.#config.current(),
      onRun: (run) => this.broadcast('task/ran', run),
      onActivity: () => this.options.onActivity?.(),
      log: this.options.log.child({ scope: 'tasks' }),
    });
    return this.#tasks;
  }

  get tools(): ToolsHost {
    this.#tools ??= new ToolsHost({
      root: this.options.root,
      tools: this.config.tools,
      env: this.options.env,
    });
    return this.#tools;
  }

  attach(client: AttachedClient): () => void {
    this.#clients.add(client);
    this.options.onActivity?.();
    return () => {
      this.#clients.delete(client);
      this.#gateway.detach(client);
      this.#sessions.endSessionsOf(client, 'exit');
      this.options.onActivity?.();
    };
  }

  receive<N extends FrontendNotification>(
    name: N,
    params: FrontendNotifications[N],
    client: AttachedClient,
  ): void {
    if (name === 'gateway/send') this.#gateway.receive(client, params.consumer, params.message);
  }

  /** The gateway's consumers now (none before the first came). */
  gatewayConsumers(): GatewayConsumerStatus[] {
    return this.#gateway.consumers();
  }

  broadcast<N extends EngineNotification>(name: N, params: EngineNotifications[N]): void {
    for (const client of this.#clients) client.notify(name, params);
  }

  async handle<M extends EngineMethod>(
    method: M,
    params: ParamsOf<M>,
    context: RequestContext,
  ): Promise<ResultOf<M>> {
    const handler = this.#handlers[method] as (
      params: ParamsOf<M>,
      context: RequestContext,
    ) => Promise<ResultOf<M>>;
    return handler(params, context);
  }

  readonly #handlers: {
    [M in EngineMethod]: (params: ParamsOf<M>, context: RequestContext) => Promise<ResultOf<M>>;
  } = {
    ...mcpHandlers(this),
    ...uiHandlers(this),
    ...lspHandlers(() => this.lsp),
    'gateway/open': (params, context) => this.#gateway.open(params, context),
    'gateway/listen': (params, context) => this.#gateway.listen(params, context),
    ...daemonHandlers({
      version: () => this.version,
      root: () => this.options.root,
      socket: () => this.options.socket ?? null,
      startedAt: () => this.startedAt,
      logFile: () => this.paths.daemonLog,
      sessions: this.#sessions,
      clients: () => this.#clients.size,
      lastLoaded: () => this.#config.last,
      configError: () => this.#config.error,
      config: () => this.config,
      tasks: () => this.tasks,
      log: () => this.options.log,
      stop: (reason) => this.options.onStopRequested?.(reason),
    }),
    ...sessionHandlers({
      sessions: this.#sessions,
      sessionDeps: () => this.#sessionDeps(),
      sessionsDir: () => this.paths.sessionsDir,
      lastLoaded: () => this.#config.last,
      config: () => this.config,
      approvalsProblem: () => this.approvals.problem,
      warmLsp: () => this.lsp.warm(),
      warmApi: () => this.api.rewarm(),
      snapshots: () => this.#snapshots,
      servers: this,
      onActivity: () => this.options.onActivity?.(),
      warn: (message, fields) => this.options.log.warn(message, fields),
    }),
    ...extensionHandlers(this, (id) => this.#sessions.session(id)),
  };

  /** What the gateway's link is given: the engine's parts, each asked for when needed. */
  #gatewayDeps(): GatewayLinkDeps {
    return {
      root: () => this.options.root,
      current: () => this.#config.current(),
      approvals: () => this.approvals,
      tools: () => this.tools,
      mcp: () => this.mcp,
      log: () => this.options.log,
      engine: () => this,
    };
  }

  get version(): string {
    return VERSION_VALUE;
  }

  #sessionDeps(): SessionDeps {
    return {
      root: this.options.root,
      home: this.paths.home,
      sessionsDir: this.paths.sessionsDir,
      outputsDir: this.paths.outputsDir,
      windows: this.#windows,
      snapshots: this.#snapshots,
      api: this.api,
      tools: this.tools,
      mcp: this.mcp,
      approvals: this.approvals,
      config: () => this.#config.require(),
      resolveModel: (name) => resolveModelSpec(this.config, name, this.options.env ?? process.env),
      instructions: () =>
        serverInstructions(this.mcp.knownStatuses(), this.#config.last?.servers ?? []),
      runCommand: (spec, signal) => this.tools.runCommand(spec, signal),
      subagents: (this.#subagentSlots ??= new Semaphore(this.config.agent.subagents.maxConcurrent)),
      lsp: this.lsp,
    };
  }

  /** Re-reads the config: a valid one is applied (only changed servers restart), a broken one reported. */
  reload(): Promise<void> {
    return this.#config.reload();
  }

  /** Applies a config just read to what runs: servers, the gateway, front-ends, watches, tasks. */
  async #apply(loaded: LoadedConfig): Promise<void> {
    // Servers, roots, log level and output cap, as the worker would start with them.
    const applied = await this.mcp.reconfigure(
      mcpWorkerData(this.options.root, loaded, this.paths, {
        env: this.options.env ?? process.env,
        probe: this.options.socket !== null,
      }),
    );
    this.options.log.info('config reloaded', { ...applied });
    void this.lsp
      .reconfigure()
      .catch((error: unknown) =>
        this.options.log.warn('language servers not reconfigured', { error: String(error) }),
      );
    this.#gateway.changed();
    this.broadcast('config/changed', { ok: true, warnings: loaded.warnings });
    this.#watch();
    if (this.options.socket !== null) this.#scheduleTasks();
  }

  #watch(): void {
    this.#stopWatching();
    this.#stopWatching = watchEngineConfig({
      root: this.options.root,
      env: this.options.env ?? process.env,
      paths: this.paths,
      loaded: this.#config.last,
      scripts: this.#config.scriptFiles(),
      reload: () => {
        if (!this.#closed) void this.reload();
      },
    });
  }

  /**
   * Builds what a first turn would build, once the servers are done starting (`prewarm.ts`);
   * then calls `onWarmed`.
   */
  warmWhenIdle(onWarmed?: () => void): void {
    this.#stopWarming = warmWhenIdle(this, async () => {
      if (this.#closed || !this.#config.last) return;
      await prewarm({
        config: this.config,
        env: this.options.env ?? process.env,
        tools: () => this.tools,
        api: this.api,
        windows: this.#windows,
        log: this.options.log,
      });
      if (!this.#closed) onWarmed?.();
    });
  }

  /** Stops watching, ends every session, server and pool task (no orphan processes). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopWarming();
    this.#stopWatching();
    this.#tasks?.close();
    await this.#gateway.close();
    releaseIndex(this.paths.sessionsDir);
    await this.#sessions.endAll();
    await Promise.allSettled([
      ...this.#sessions.closeAll(),
      this.mcp.close(),
      this.lsp.close(),
      this.api.close(),
      this.#tools?.close(),
    ]);
  }
}
