import type {
  McpCompletionRef,
  McpEvent,
  McpLogLevel,
  McpPromptInfo,
  McpResourceInfo,
  McpResourceTemplateInfo,
  McpTraceEntry,
  McpServerSpec,
  McpServerStatus,
  McpToolInfo,
  McpWorkerData,
  McpCalls,
  McpForwardMethod,
  McpForwardResult,
} from '../protocol/mcp.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { withDefaults } from './backoff.ts';
import type { CallOptions } from './call.ts';
import type { ClientSide } from './client-handlers.ts';
import { ServerConnection } from './connection.ts';
import type { ConnectionContext, ServerBase } from './server-base.ts';
import { NifflerError } from '../protocol/wire-error.ts';
import { assignToolNames, type NameTable } from './naming.ts';
import { promptsOf, renamedServers, resourcesOf, templatesOf, toolsOf } from './listing.ts';
import { killGroup } from '../shared/process-group.ts';
import { complete, forward, getPrompt, readResource } from './extras.ts';
import { VerdictStore } from './negotiation.ts';
import { inCallScope } from './call-scope.ts';
import { watchWorkspace } from './workspace-watch.ts';
import { keptCatalogs, type KeptCatalogs } from './kept-catalog.ts';
import { reconcile } from './reconcile.ts';

export type Side = Omit<ClientSide, 'listChanged' | 'serverLog' | 'roots'>;

/** JSON-RPC's internal error: what a forwarded request gets when no server answered it. */
const INTERNAL_ERROR = -32603;

/**
 * Every server connection of the workspace: the `server__tool` name table over all of them,
 * config reloads, roots and log level, and the events the engine sees.
 */
export class McpManager {
  private readonly connections = new Map<string, ServerConnection>();
  private names: NameTable = { toModel: new Map(), fromModel: new Map() };
  private roots: string[];
  private logLevel: McpLogLevel;
  private readonly ctx: ConnectionContext;
  private stopWatching: (() => void) | undefined;
  /** Post servers' log messages as `server-log` events (while a gateway consumer listens). */
  private forwardLogs = false;

  constructor(
    data: McpWorkerData,
    private readonly emit: (event: McpEvent) => void,
    side: (server: string) => Side,
    kept?: KeptCatalogs,
  ) {
    this.roots = data.roots.length ? data.roots : [data.root];
    this.logLevel = data.logLevel;
    this.ctx = {
      root: data.root,
      logsDir: data.logsDir,
      outputsDir: data.outputsDir,
      serversDir: data.serversDir,
      authDir: data.authDir,
      maxOutputChars: data.maxOutputChars ?? 30_000,
      maxLogBytes: data.maxLogBytes ?? 1024 * 1024,
      logLevel: () => this.logLevel,
      health: withDefaults(data.health),
      verdicts: new VerdictStore(data.protocolsFile),
      probe: data.probe ?? true,
      kept: kept ?? keptCatalogs(data, this.emit),
      side: (server) => ({
        ...side(server),
        roots: () => this.roots,
        forwardLog: (level, logger, data) => {
          if (this.forwardLogs)
            this.emit({
              type: 'server-log',
              server,
              level: level as McpLogLevel,
              ...(logger ? { logger } : {}),
              data,
            });
        },
      }),
      changed: (connection, what) => this.changed(connection, what),
      log: (level, msg, fields) =>
        this.emit({ type: 'log', level, msg, ...(fields ? { data: fields } : {}) }),
    };
    for (const spec of data.servers)
      this.connections.set(spec.name, new ServerConnection(spec, this.ctx));
    this.adoptKeptCatalogs(data.servers);
    this.watchIfCaching();
  }

  /**
   * The servers about to start offer the catalogs kept from their last run until their own
   * arrive (see kept-catalog.ts); the catalogs of servers no longer configured go.
   */
  private adoptKeptCatalogs(specs: McpServerSpec[]): void {
    this.ctx.kept.prune(specs.map((spec) => spec.name));
    let adopted = false;
    for (const conn of this.connections.values())
      if (conn.spec.gate === 'startable' && conn.spec.autoStart)
        adopted = conn.adoptKept() || adopted;
    if (adopted) this.renameAll();
  }

  /** Starts every startable auto-start server without waiting for them. */
  startAll(): void {
    for (const conn of this.connections.values())
      if (conn.spec.gate === 'startable' && conn.spec.autoStart) void conn.start(false);
  }

  status(): McpServerStatus[] {
    return [...this.connections.values()].map((c) => {
      const status = c.status();
      return c.log.problem ? { ...status, logError: c.log.problem } : status;
    });
  }

  listTools(): McpToolInfo[] {
    this.freshen();
    return [...this.connections.values()].flatMap((c) => this.toolsOf(c));
  }

  /** Lists anew the catalog parts whose cache hint ran out (they serve as they are meanwhile). */
  private freshen(): void {
    for (const conn of this.connections.values()) conn.keeper.freshen();
  }

  listPrompts(): McpPromptInfo[] {
    this.freshen();
    return [...this.connections.values()].flatMap(promptsOf);
  }

  listResources(): McpResourceInfo[] {
    this.freshen();
    return [...this.connections.values()].flatMap(resourcesOf);
  }

  listResourceTemplates(): McpResourceTemplateInfo[] {
    return [...this.connections.values()].flatMap(templatesOf);
  }

  complete(
    server: string,
    ref: McpCompletionRef,
    argument: { name: string; value: string },
    context: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<{ values: string[]; hasMore: boolean }> {
    return complete(this.get(server), ref, argument, context, signal);
  }

  trace(server: string, since?: number): McpTraceEntry[] {
    return this.get(server).trace.entries(since);
  }

  /** Forgets every cached tool result (a file of the workspace changed). */
  invalidateCache(): void {
    for (const conn of this.connections.values()) {
      const had = conn.results.stats().entries > 0;
      conn.results.clear();
      if (had) this.changed(conn, 'status');
    }
  }

  /** Watches the workspace while some server caches tool results (see workspace-watch.ts). */
  private watchIfCaching(): void {
    const caching = [...this.connections.values()].some((c) => c.spec.cache);
    if (caching && !this.stopWatching)
      this.stopWatching = watchWorkspace(this.ctx.root, () => this.invalidateCache());
    if (!caching && this.stopWatching) {
      this.stopWatching();
      this.stopWatching = undefined;
    }
  }

  /**
   * Calls a tool by its model-facing name; an unknown name is a `not-found` result. A call to a
   * server still starting waits for it (at most `options.waitMs`), and then finds its tool in
   * the catalog the server itself sent: a tool it no longer has (one kept from an earlier run,
   * say) is unknown, as after a `list_changed`.
   */
  callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolResult> {
    const ref = this.names.fromModel.get(name);
    const conn = ref && this.connections.get(ref.server);
    if (!ref || !conn) return Promise.resolve(this.notFound(name));
    if (conn.state !== 'starting') return conn.call(ref.tool, args, options);
    return this.callOnceStarted(conn, name, args, options);
  }

  private async callOnceStarted(
    conn: ServerConnection,
    name: string,
    args: Record<string, unknown>,
    options: CallOptions,
  ): Promise<ToolResult> {
    await conn.untilStarted(options.signal, options.waitMs);
    const ref = this.names.fromModel.get(name);
    if (conn.state === 'ready' && ref?.server !== conn.name) return this.notFound(name);
    return conn.call(ref?.tool ?? name, args, options);
  }

  private notFound(name: string): ToolResult {
    return {
      ok: false,
      error: {
        code: 'not-found',
        message: `no MCP tool named "${name}"; the tools are: ${[...this.names.fromModel.keys()].slice(0, 50).join(', ') || 'none'}`,
      },
    };
  }

  readResource(server: string, uri: string, signal: AbortSignal): Promise<ToolResult> {
    return readResource(this.get(server), uri, signal, this.ctx);
  }

  getPrompt(server: string, prompt: string, args: Record<string, string>, signal: AbortSignal) {
    return getPrompt(this.get(server), prompt, args, signal, this.ctx);
  }

  /** A request passed to `server` as it is (the gateway's prompts, resources, completions). */
  async forward(
    server: string,
    method: McpForwardMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
    asker?: number,
  ): Promise<McpForwardResult> {
    const conn = this.connections.get(server);
    if (!conn)
      return { ok: false, code: INTERNAL_ERROR, message: `no MCP server named "${server}"` };
    return inCallScope({ server, tool: undefined, asker, signal }, () =>
      forward(conn, method, params, signal),
    );
  }

  /** Whether servers' log messages are posted as `server-log` events. */
  setLogForwarding(on: boolean): void {
    this.forwardLogs = on;
  }

  async start(server: string): Promise<McpServerStatus> {
    const conn = this.get(server);
    if (conn.spec.gate === 'disabled')
      throw new NifflerError(
        'usage',
        `server "${server}" is disabled in the configuration; set enabled: true to start it`,
        { server },
      );
    if (conn.spec.gate === 'untrusted')
      throw new NifflerError(
        'untrusted',
        `server "${server}" comes from this repository, which is not trusted; review it and run niffler trust`,
        { server },
      );
    await conn.start(true);
    return conn.status();
  }

  async stop(server: string): Promise<McpServerStatus> {
    const conn = this.get(server);
    await conn.stop();
    return conn.status();
  }

  async restart(server: string): Promise<McpServerStatus> {
    const conn = this.get(server);
    if (conn.spec.gate !== 'startable') return this.start(server);
    await conn.restart();
    return conn.status();
  }

  /** Applies a new set of specs: only what changed is touched. */
  async updateServers(specs: McpServerSpec[]): Promise<McpCalls['update-servers']['result']> {
    const result = await reconcile(this.connections, specs, this.ctx, (conn) =>
      this.changed(conn, 'status'),
    );
    this.renameAll();
    this.watchIfCaching();
    return result;
  }

  async setRoots(roots: string[]): Promise<string[]> {
    this.roots = roots;
    const notified = await Promise.all(
      [...this.connections.values()].map(async (c) =>
        (await c.rootsChanged().catch(() => false)) ? c.name : undefined,
      ),
    );
    return notified.filter((n): n is string => n !== undefined);
  }

  async setLogLevel(level: McpLogLevel): Promise<void> {
    this.logLevel = level;
    await Promise.all(
      [...this.connections.values()].map((c) => c.setLogLevel(level).catch(() => undefined)),
    );
  }

  /** Applies from the next result on, on every connection (they share this context). */
  setOutputLimit(maxChars: number): void {
    this.ctx.maxOutputChars = maxChars;
  }

  async shutdown(): Promise<void> {
    this.stopWatching?.();
    await Promise.all([...this.connections.values()].map((c) => c.stop()));
  }

  /** Last resort when the thread is going away: terminate every process group we still own. */
  killAll(): void {
    for (const conn of this.connections.values()) {
      const pid = conn.processId;
      if (pid !== null) killGroup(pid, 'SIGTERM');
    }
  }

  private get(server: string): ServerConnection {
    const conn = this.connections.get(server);
    if (!conn)
      throw new NifflerError(
        'mcp-not-found',
        `no MCP server named "${server}"; configured: ${[...this.connections.keys()].join(', ') || 'none'}`,
        { server },
      );
    return conn;
  }

  private toolsOf(conn: ServerBase): McpToolInfo[] {
    return toolsOf(conn, this.names);
  }

  /** Rebuilds the name table; returns the servers whose model-facing names changed. */
  private renameAll(): Set<string> {
    const before = this.names;
    this.names = assignToolNames(
      [...this.connections.values()].flatMap((c) =>
        c.tools.map((t) => ({ server: c.name, tool: t.name })),
      ),
    );
    return renamedServers(before, this.names);
  }

  private changed(
    conn: ServerBase,
    what: 'status' | 'tools' | 'prompts' | 'resources' | 'templates',
  ): void {
    switch (what) {
      case 'status':
        if (this.connections.get(conn.name) === conn)
          this.emit({ type: 'status', status: conn.status() });
        return;
      case 'tools': {
        const servers = this.renameAll();
        servers.add(conn.name);
        for (const server of servers) {
          const c = this.connections.get(server);
          const kept = c?.takeRevision();
          this.emit({
            type: 'tools-changed',
            server,
            tools: c ? this.toolsOf(c) : [],
            ...(kept ? { kept } : {}),
          });
        }
        return;
      }
      case 'prompts':
        this.emit({ type: 'prompts-changed', server: conn.name });
        return;
      case 'resources':
      case 'templates':
        this.emit({ type: 'resources-changed', server: conn.name });
        return;
    }
  }
}
