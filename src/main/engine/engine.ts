import path from 'node:path';
import type { McpElicitationAnswer, McpSamplingAnswer } from '../../workers/protocol/mcp.ts';
import { loadConfig, type LoadedConfig } from '../config/load.ts';
import { NifflerError } from '../errors.ts';
import { nifflerPaths, type NifflerPaths } from '../paths.ts';
import type {
  AttachedClient,
  DaemonStatus,
  EngineHandlers,
  RequestContext,
  EngineMethod,
  FrontendNotification,
  FrontendNotifications,
  GatewayConsumerStatus,
  EngineNotification,
  EngineNotifications,
  ParamsOf,
  PromptParams,
  ResultOf,
} from '../protocol.ts';
import { ApiHost, resolveModelSpec } from '../threads/api.ts';
import { mcpWorkerData, type McpHost, type McpHostEvent } from '../threads/mcp.ts';
import { beginEngine, type EngineOptions } from './boot.ts';
import type { Gateway } from '../gateway/gateway.ts';
import { isLoopbackHost } from '../gateway/token.ts';
import { ToolsHost } from '../threads/tools.ts';
import { ApprovalStore } from './approvals.ts';
import { ScriptWatch } from '../trust/scripts.ts';
import { ContextWindows } from './context/window.ts';
import { SnapshotStore } from './snapshots.ts';
import { undoTurn } from './undo.ts';
import { watchConfigFiles } from './config-watch.ts';
import { applyElicitationDefaults, summarizeSampling } from './requests.ts';
import { Session } from './session.ts';
import type { SessionDeps } from './session-deps.ts';
import { listSessions, readTranscript } from './transcript.ts';
import { releaseIndex, searchSessions } from './search-index.ts';
import { knownServer, mcpHandlers, serverInstructions } from './mcp-handlers.ts';
import { leftOutNotices, serversSettled } from './server-waits.ts';
import { awaitTurnServers } from './turn-servers.ts';
import { trustOffer, uiHandlers } from './ui-handlers.ts';
import { extensionHandlers } from '../extensions/handlers.ts';
import type { CommandRunner } from '../extensions/expand.ts';
import { extensionDirs, usableExtensions } from '../extensions/load.ts';
import { findAgent } from '../extensions/turn.ts';
import { notTrustedNow, runRepoTool } from '../extensions/repo-tools.ts';
import { fail } from '../../workers/protocol/tool-result.ts';
import type { ServedRepoTool } from '../gateway/catalog.ts';
import { watchExtensionDirs } from '../extensions/watch.ts';
import { Semaphore } from '../extensions/subagents.ts';
import { TaskRunner } from '../extensions/task-runner.ts';
import { ConfigSchema, type Config } from '../config/schema.ts';
import { LspService } from '../lsp/service.ts';
import { lspHandlers } from '../lsp/handlers.ts';
import { VERSION as VERSION_VALUE } from '../version.ts';
import { mark } from '../../workers/shared/timeline.ts';

interface ActiveTurn {
  client: AttachedClient;
  params: PromptParams;
  signal: AbortSignal;
}

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
  #loaded: LoadedConfig | null;
  #configError: string | null;
  readonly #idleWaiters: (() => void)[] = [];
  readonly #clients = new Set<AttachedClient>();
  readonly #sessions = new Map<string, Session>();
  readonly #active = new Map<string, ActiveTurn>();
  /** The sessions each front-end opened: their SessionEnd hooks run when it goes. */
  readonly #opened = new Map<AttachedClient, Set<Session>>();
  /** Sessions let go (see `#release`) whose transcripts are still being closed. */
  readonly #closing = new Map<string, Promise<void>>();
  readonly #windows = new ContextWindows();
  #subagentSlots: Semaphore | undefined;
  #tasks: TaskRunner | undefined;
  #snapshotStore: SnapshotStore | undefined;
  /** The repository files trusted commands run, as they were when the config was read. */
  readonly #scripts = new ScriptWatch();
  #gateway: Gateway | undefined;

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
    this.paths = nifflerPaths(options.root, options.env);
    this.#loaded = loaded;
    if (loaded) this.#scripts.take(loaded);
    this.#configError = configError;
    this.api = api ?? new ApiHost({ log: options.log.child({ scope: 'api' }) });
    this.approvals = new ApprovalStore(this.paths.approvalsFile, options.root);
    this.lsp = new LspService({
      root: options.root,
      daemon: options.socket !== null,
      paths: this.paths,
      env: options.env ?? process.env,
      log: options.log,
      loaded: () => this.#loaded,
      configError: () => this.#configError,
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
      this.#toGateway(event);
    });
    mcp.setElicitationHandler((request) => this.#elicit(request.server, request.elicitation));
    mcp.setSamplingHandler((request) => this.#sample(request.server, request.params));
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
    return this.#current();
  }

  get config(): Config {
    return this.#loaded?.config ?? ConfigSchema.parse({});
  }

  get configError(): string | null {
    return this.#configError;
  }

  get clients(): number {
    return this.#clients.size;
  }

  get runningTurns(): number {
    return this.#active.size + (this.#tasks?.running ?? 0);
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
      loaded: () => this.#current(),
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
      void this.#gateway?.detach(client);
      this.#endSessionsOf(client, 'exit');
      this.options.onActivity?.();
    };
  }

  receive<N extends FrontendNotification>(
    name: N,
    params: FrontendNotifications[N],
    client: AttachedClient,
  ): void {
    if (name === 'gateway/send') this.#gateway?.receive(client, params.consumer, params.message);
  }

  /**
   * The gateway (`niffler mcp serve`), made when its first consumer comes: its code (the SDK's
   * server among it) is loaded then, not by every daemon (a few MiB it would keep all day).
   */
  async #gatewayNow(): Promise<Gateway> {
    if (this.#gateway) return this.#gateway;
    const { Gateway } = await import('../gateway/gateway.ts');
    this.#gateway ??= new Gateway({
      root: this.options.root,
      loaded: () => this.#current(),
      approvals: this.approvals,
      tools: {
        definitions: () => this.tools.definitions(),
        run: (c, s, p) => this.tools.run(c, s, p),
      },
      runCommand: (spec, signal) => this.tools.runCommand(spec, signal),
      mcp: this.mcp,
      log: this.options.log.child({ scope: 'gateway' }),
      source: {
        loaded: () => this.#current(),
        definitions: () => this.tools.definitions(),
        repoTools: () => this.#servedRepoTools(),
        listTools: () => this.mcp.listTools(),
        listPrompts: () => this.mcp.listPrompts(),
        listResources: () => this.mcp.listResources(),
        listResourceTemplates: () => this.mcp.listResourceTemplates(),
      },
      setLogForwarding: (on) => this.mcp.setLogForwarding(on),
      settled: (signal, servers) =>
        serversSettled(this, servers, signal, this.config.mcp.startupWait * 1000),
    });
    return this.#gateway;
  }

  /**
   * The repository tools the gateway serves: those a session may use (none of an untrusted
   * repository's), less what `tools.disabled` names (`repo`: all of them).
   */
  #servedRepoTools(): ServedRepoTool[] {
    const loaded = this.#current();
    if (!loaded) return [];
    const disabled = new Set(loaded.config.tools.disabled);
    if (disabled.has('repo')) return [];
    const run: CommandRunner = (spec, signal) => this.tools.runCommand(spec, signal);
    return usableExtensions(loaded)
      .extensions.tools.filter((tool) => !disabled.has(tool.name))
      .map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.parameters,
        readOnly: tool.annotations.readOnlyHint === true,
        destructive: tool.annotations.destructiveHint === true,
        openWorld: tool.annotations.openWorldHint === true,
        run: (args, signal) => {
          // As the config has it when the call runs: a script it runs may have changed since.
          const now = this.#current();
          const same =
            now && usableExtensions(now).extensions.tools.find((t) => t.name === tool.name);
          return same?.command === tool.command
            ? runRepoTool(same, run, this.options.root, args, signal)
            : Promise.resolve(fail('denied', notTrustedNow(tool)));
        },
      }));
  }

  /** The gateway's consumers now (none before the first came). */
  gatewayConsumers(): GatewayConsumerStatus[] {
    return this.#gateway?.statuses() ?? [];
  }

  /** What the gateway's consumers must hear of the MCP worker's events. */
  #toGateway(event: McpHostEvent): void {
    const gateway = this.#gateway;
    if (!gateway) return;
    switch (event.type) {
      case 'status':
        return gateway.serverStatus(event.status.name, event.status.state === 'ready');
      case 'tools-changed':
        return gateway.changed('tools');
      case 'prompts-changed':
        return gateway.changed('prompts');
      case 'resources-changed':
        return gateway.changed('resources');
      case 'server-log':
        return gateway.serverLog(event.server, event.level, event.logger, event.data);
      case 'worker-exit':
        return gateway.changed('all');
    }
  }

  /**
   * SessionEnd hooks of the sessions `client` opened, those running a turn excepted; then each
   * goes from memory unless someone else holds it (`#release`; one running a turn, once it ends).
   */
  #endSessionsOf(client: AttachedClient, reason: string): void {
    const sessions = [...(this.#opened.get(client) ?? [])];
    this.#opened.delete(client);
    for (const session of sessions) {
      if (this.#active.has(session.id)) continue;
      void session.hooks.end(reason).finally(() => this.#release(session));
    }
  }

  /**
   * Lets a session go from memory once nobody holds it — no attached front-end opened it and no
   * turn runs on it. A daemon serving one-shot commands all day kept every session it ever ran,
   * history and all; the transcript is on disk, and a resume reads it back.
   */
  #release(session: Session): void {
    if (this.#active.has(session.id) || this.#sessions.get(session.id) !== session) return;
    for (const held of this.#opened.values()) if (held.has(session)) return;
    this.#sessions.delete(session.id);
    const closing = session.close().catch(() => undefined);
    this.#closing.set(session.id, closing);
    void closing.then(() => {
      if (this.#closing.get(session.id) === closing) this.#closing.delete(session.id);
    });
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
    'gateway/open': async ({ server }, { client }) => ({
      consumer: (await this.#gatewayNow()).openStdio(
        client,
        server ? knownServer(this, server).name : undefined,
      ),
    }),
    'gateway/listen': async ({ host, port, tokenSha256, server, remote }, { client }) => {
      if (!remote && !isLoopbackHost(host))
        throw new NifflerError(
          'usage',
          `${host} is not a loopback address; binding it needs --allow-remote (see niffler mcp serve --help)`,
        );
      const scope = server ? knownServer(this, server).name : undefined;
      const listener = await (
        await this.#gatewayNow()
      ).listen(client, {
        host,
        port,
        tokenSha256,
        ...(scope ? { scope } : {}),
      });
      return { url: listener.url, host, port: listener.port };
    },
    hello: async (params) => {
      if (params.version !== this.version) {
        this.options.log.info('front-end of another version: restarting when idle', {
          ours: this.version,
          theirs: params.version,
        });
        void this.#whenIdle().then(() =>
          this.options.onStopRequested?.(`front-end version ${params.version}`),
        );
        return { ok: false, reason: 'version-mismatch', version: this.version, pid: process.pid };
      }
      return { ok: true, version: this.version, pid: process.pid, root: this.options.root };
    },
    'daemon/status': async () => this.status(),
    'daemon/stop': async () => {
      queueMicrotask(() => this.options.onStopRequested?.('niffler daemon stop'));
      return { stopping: true };
    },
    'session/open': async (params, { client }) => {
      this.api.rewarm();
      const deps = this.#sessionDeps();
      let session: Session;
      let warnings: string[] = [];
      const resumeId =
        params.resume ??
        (params.continue ? listSessions(this.paths.sessionsDir)[0]?.id : undefined);
      if (params.continue && !resumeId)
        warnings.push('no earlier session in this workspace: starting a new one');
      // An unknown profile is an error, never a fallback to another one.
      if (params.agent && this.#loaded)
        findAgent(usableExtensions(this.#loaded).extensions, params.agent);
      // One just let go: its transcript is read back once it is whole on disk.
      if (resumeId) await this.#closing.get(resumeId);
      if (resumeId && params.atTurn !== undefined)
        ({ session, warnings } = await Session.fork(deps, resumeId, params.atTurn));
      else if (resumeId) {
        const existing = this.#sessions.get(resumeId);
        if (existing) session = existing;
        else ({ session, warnings } = Session.resume(deps, resumeId));
      } else
        session = Session.create(deps, {
          ...(params.agent ? { agent: params.agent } : {}),
          ...(params.disabled ? { disabled: params.disabled } : {}),
        });
      if (resumeId && params.agent) session.setAgent(params.agent);
      this.#sessions.set(session.id, session);
      // A new session from the same front-end (/clear) ends the one it had.
      if (!resumeId) this.#endSessionsOf(client, 'clear');
      this.#opened.set(client, new Set([...(this.#opened.get(client) ?? []), session]));
      // The workspace's language servers start now, warm by the first edit.
      this.lsp.warm();
      const offer = this.#loaded ? trustOffer(this.#loaded) : undefined;
      if (this.approvals.problem) warnings = [...warnings, this.approvals.problem];
      return {
        sessionId: session.id,
        messages: session.messages,
        warnings,
        model: this.config.model,
        spent: { turns: session.turns, usage: session.usage, costUsd: session.costUsd },
        ...(offer ? { trust: offer } : {}),
        agent: session.agent,
        disabled: [...session.disabled],
      };
    },
    'session/prompt': async (params, { client, signal }) => {
      mark('prompt received');
      const session = this.#session(params.sessionId);
      this.#active.set(session.id, { client, params, signal });
      this.options.onActivity?.();
      try {
        // A sick server holds no prompt up for long: the turn goes on without its tools.
        const statuses = await awaitTurnServers(this, signal);
        return await session.prompt(
          params,
          {
            emit: (event) => client.notify('session/event', { sessionId: session.id, event }),
            ask: (method, p, s) => client.ask(method, p, s),
          },
          signal,
          leftOutNotices(statuses),
        );
      } finally {
        this.#active.delete(session.id);
        if (this.#active.size === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
        this.#release(session);
        this.options.onActivity?.();
      }
    },
    'session/search': async ({ text, limit }) => {
      if (!text.trim())
        throw new NifflerError(
          'usage',
          'a session search needs words to look for: niffler sessions search WORDS, or /resume WORDS',
        );
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1))
        throw new NifflerError('usage', `a search limit is a whole number from 1, not ${limit}`);
      const found = await searchSessions(this.paths.sessionsDir, text, Math.min(limit ?? 20, 1000));
      for (const problem of found.problems) this.options.log.warn('session search', { problem });
      return found;
    },
    'session/list': async () =>
      listSessions(this.paths.sessionsDir).map(({ file: _file, ...summary }) => summary),
    'session/compact': async ({ sessionId, focus }, { client, signal }) => {
      const session = this.#session(sessionId);
      const notes = await session.compact(
        focus,
        {
          emit: (event) => client.notify('session/event', { sessionId: session.id, event }),
          ask: (method, p, s) => client.ask(method, p, s),
        },
        signal,
      );
      return { notes };
    },
    'session/context': async ({ sessionId, model, cwd }, { signal }) => {
      const id = sessionId ?? listSessions(this.paths.sessionsDir)[0]?.id;
      if (!id)
        throw new NifflerError('usage', 'no session in this workspace yet: start one with niffler');
      return this.#session(id).contextReport(
        { ...(model ? { model } : {}), ...(cwd ? { cwd } : {}) },
        signal,
      );
    },
    'session/undo': async ({ sessionId, turn, apply }) => {
      if (apply && this.#active.size)
        throw new NifflerError(
          'usage',
          'a turn is running: undo once it has ended (Esc cancels it)',
        );
      const id = sessionId ?? listSessions(this.paths.sessionsDir)[0]?.id;
      if (!id) throw new NifflerError('usage', 'no session in this workspace yet: nothing to undo');
      const { entries } = readTranscript(this.paths.sessionsDir, id);
      return {
        sessionId: id,
        ...(await undoTurn(this.#snapshots, entries, { ...(turn ? { turn } : {}), apply })),
      };
    },
    'session/toggle': async ({ sessionId, name, enabled }) => {
      const session = this.#session(sessionId);
      const disabled = session.toggle(name, enabled);
      await session.saved();
      return { disabled };
    },
    ...extensionHandlers(this, (id) => this.#session(id)),
  };

  get version(): string {
    return VERSION_VALUE;
  }

  #session(id: string): Session {
    const session = this.#sessions.get(id);
    if (session) return session;
    const { session: resumed } = Session.resume(this.#sessionDeps(), id);
    this.#sessions.set(id, resumed);
    return resumed;
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
      config: () => this.#requireConfig(),
      resolveModel: (name) => resolveModelSpec(this.config, name, this.options.env ?? process.env),
      instructions: () => serverInstructions(this.mcp.knownStatuses(), this.#loaded?.servers ?? []),
      runCommand: (spec, signal) => this.tools.runCommand(spec, signal),
      subagents: (this.#subagentSlots ??= new Semaphore(this.config.agent.subagents.maxConcurrent)),
      lsp: this.lsp,
    };
  }

  /** The config a turn runs with; none while the config has never loaded (the error says why). */
  #requireConfig(): LoadedConfig {
    const loaded = this.#current();
    if (loaded) return loaded;
    throw new NifflerError(
      'config-invalid',
      `${this.#configError ?? 'the config did not load'}\nFix it and save: the daemon reloads it.`,
    );
  }

  /** The front-end whose turn runs now: the one asked for approvals, elicitations and sampling. */
  #activeTurn(): ActiveTurn | undefined {
    return [...this.#active.values()].at(-1);
  }

  async #elicit(
    server: string,
    elicitation: Parameters<typeof applyElicitationDefaults>[0],
  ): Promise<McpElicitationAnswer> {
    const turn = this.#activeTurn();
    if (turn?.params.interactive)
      return turn.client.ask('elicitation/ask', { server, elicitation }, turn.signal);
    if (turn?.params.yes) {
      const content = applyElicitationDefaults(elicitation);
      const required = (elicitation.requestedSchema['required'] ?? []) as string[];
      const missing = required.filter((key) => !(key in content));
      if (missing.length === 0) return { action: 'accept', content };
      return {
        action: 'decline',
        reason: `--yes can only answer with defaults, and ${missing.join(', ')} has none`,
      };
    }
    return {
      action: 'decline',
      reason: turn
        ? 'one-shot mode without --yes: nobody can answer'
        : 'no user interface is attached to answer it',
    };
  }

  async #sample(
    server: string,
    params: Parameters<typeof summarizeSampling>[0],
  ): Promise<McpSamplingAnswer> {
    const turn = this.#activeTurn();
    if (!turn) return { ok: false, reason: 'no session is running to approve a sampling request' };
    if (!turn.params.yes) {
      if (!turn.params.interactive)
        return { ok: false, reason: 'one-shot mode without --yes: sampling needs approval' };
      const { approve } = await turn.client.ask(
        'sampling/ask',
        { server, summary: summarizeSampling(params), maxTokens: params.maxTokens },
        turn.signal,
      );
      if (!approve) return { ok: false, reason: 'the user declined the sampling request' };
    }
    const model = resolveModelSpec(
      this.config,
      turn.params.model ?? this.config.model,
      this.options.env ?? process.env,
    );
    const messages = params.messages.map((m) => ({
      role: m.role,
      content:
        typeof m.content === 'object' && m.content && 'text' in m.content
          ? String(m.content.text)
          : '',
    }));
    const system =
      typeof params['systemPrompt'] === 'string'
        ? [{ role: 'system' as const, content: params['systemPrompt'] }]
        : [];
    let text = '';
    for await (const event of this.api.stream(
      {
        model: { ...model, maxTokens: params.maxTokens },
        messages: [...system, ...messages],
        tools: [],
      },
      turn.signal,
    ))
      if (event.type === 'text') text += event.text;
    return {
      ok: true,
      model: model.model,
      role: 'assistant',
      content: { type: 'text', text },
      stopReason: 'endTurn',
    };
  }

  /** Resolves when no turn runs (at once when none does), told by the turn that ends last. */
  #whenIdle(): Promise<void> {
    if (this.#active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  status(): DaemonStatus {
    const memory = process.memoryUsage();
    return {
      pid: process.pid,
      version: this.version,
      root: this.options.root,
      socket: this.options.socket ?? null,
      startedAt: this.startedAt,
      uptimeMs: Date.now() - this.startedAt,
      clients: this.#clients.size,
      runningTurns: this.#active.size,
      sessionsInMemory: this.#sessions.size,
      memory: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed },
      configFiles: this.#loaded?.files ?? [],
      configError: this.#configError,
      idleMinutes: this.config.daemon.idleMinutes,
      logFile: this.paths.daemonLog,
      ...(this.options.log.problem() ? { logError: this.options.log.problem() } : {}),
      schedules: this.tasks
        .list()
        .filter((t) => t.schedule)
        .map((t) => ({
          task: t.name,
          schedule: t.schedule!,
          ...(t.next ? { next: t.next } : {}),
          ...(t.missed ? { missed: t.missed } : {}),
        })),
    };
  }

  /** Re-reads the config: a valid one is applied (only changed servers restart), a broken one reported. */
  async reload(): Promise<void> {
    const loaded = this.#readConfig();
    if (loaded) await this.#apply(loaded);
  }

  /** Reads the config and, when it is valid, takes it as the config now; reports a broken one. */
  #readConfig(): LoadedConfig | undefined {
    const result = loadConfig({
      root: this.options.root,
      env: this.options.env ?? process.env,
      flags: this.options.flags ?? [],
    });
    if (!result.ok) {
      this.#configError = result.error.message;
      this.options.log.warn('config reload failed; keeping the last good config', {
        error: result.error.message,
      });
      this.broadcast('config/changed', { ok: false, error: result.error.message, warnings: [] });
      return undefined;
    }
    this.options.onConfig?.(result.value);
    this.#loaded = result.value;
    this.#scripts.take(result.value);
    this.#configError = null;
    // Built-in tools take their section as it now stands (a host not started yet reads it then),
    // before anything awaits: of two reloads close together, the later file wins.
    this.#tools?.configure(result.value.config.tools);
    return result.value;
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
    this.#gateway?.changed('all');
    this.broadcast('config/changed', { ok: true, warnings: loaded.warnings });
    this.#watch();
    if (this.options.socket !== null) this.#scheduleTasks();
  }

  /**
   * The config now: when a repository file that trusted commands run changed since it was read
   * (a watch may not have fired yet), read again first — the repository is not trusted for it.
   */
  #current(): LoadedConfig | null {
    const changed = this.#scripts.changed();
    if (changed) {
      this.options.log.info('a script the trusted repository runs changed', { file: changed });
      const loaded = this.#readConfig();
      if (loaded) void this.#apply(loaded);
    }
    return this.#loaded;
  }

  #watch(): void {
    this.#stopWatching();
    const paths = this.paths;
    // The trust store too: `niffler trust` in another terminal applies here at once.
    const files = [
      ...(this.#loaded?.files.map((f) => f.file) ?? [
        paths.globalConfig,
        paths.repoConfig,
        paths.mcpJson,
      ]),
      paths.trustFile,
      // The repository files trusted commands run: an edit makes the repository untrusted.
      ...this.#scripts.files(),
    ];
    const reload = () => {
      if (!this.#closed) void this.reload();
    };
    const stopFiles = watchConfigFiles(files, reload);
    // Agents, commands, repository tools and tasks: a change there can change trust too.
    const dirs = Object.values(extensionDirs(this.options.root, this.options.env ?? process.env));
    const stopDirs = watchExtensionDirs(
      dirs.flat().map((d) => d.dir),
      reload,
    );
    this.#stopWatching = () => {
      stopFiles();
      stopDirs();
    };
  }

  /**
   * Builds what a first turn would otherwise build while the user waits — the API worker with
   * the model's client library loaded, the model's context window asked of its provider, the
   * tools' definitions — once the servers are done starting (at most 10 s on), so it does not
   * compete with them. The tools pool's thread is left to the first tool call: the model's
   * request does not wait for it, and an idle daemon is ~25 MiB smaller without it. For the
   * daemon; an in-process engine serves one command.
   */
  warmWhenIdle(): void {
    const controller = new AbortController();
    this.#stopWarming = () => controller.abort();
    void serversSettled(this, undefined, controller.signal, 10_000)
      .catch(() => undefined)
      .then(() => (controller.signal.aborted ? undefined : this.#prewarm()));
  }

  async #prewarm(): Promise<void> {
    if (this.#closed || !this.#loaded) return;
    this.tools.definitions();
    try {
      const model = resolveModelSpec(
        this.config,
        this.config.model,
        this.options.env ?? process.env,
      );
      this.api.warm(model);
      await this.#windows.resolve(model, this.config.models[this.config.model]?.contextWindow);
    } catch (error) {
      // No model configured or no key yet: the first turn says so itself.
      this.options.log.debug('nothing to warm for the model', { error: String(error) });
    }
  }

  /** Stops watching, ends every session, server and pool task (no orphan processes). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopWarming();
    this.#stopWatching();
    this.#tasks?.close();
    await this.#gateway?.close();
    releaseIndex(this.paths.sessionsDir);
    await Promise.allSettled([...this.#sessions.values()].map((s) => s.hooks.end('other')));
    await Promise.allSettled([
      ...this.#closing.values(),
      ...[...this.#sessions.values()].map((session) => session.close()),
      this.mcp.close(),
      this.lsp.close(),
      this.api.close(),
      this.#tools?.close(),
    ]);
  }
}
