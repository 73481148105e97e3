import path from 'node:path';
import type { Client, Tool } from '@modelcontextprotocol/client';
import type {
  McpCatalogSource,
  McpLogLevel,
  McpToolFact,
  McpServerSpec,
  McpServerState,
  McpServerStatus,
  McpTransportKind,
} from '../protocol/mcp.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { redactKnown, redactString } from '../shared/redact.ts';
import { Restarts, type Health } from './backoff.ts';
import { callTool, type CallOptions } from './call.ts';
import { inCallScope, relatedCall } from './call-scope.ts';
import { CatalogKeeper, EMPTY_CATALOG } from './catalog.ts';
import type { Catalog, CatalogPart } from './catalog-types.ts';
import type { ClientSide } from './client-handlers.ts';
import { Limiter } from './limiter.ts';
import type { StartAttempt } from './attempt.ts';
import { describeLoss } from './describe.ts';
import { abortable, type ServerLink } from './link.ts';
import { catalogRevision, type CatalogRevision } from './catalog-revision.ts';
import type { KeptCatalog, KeptCatalogs } from './kept-catalog.ts';
import { logFileName, ServerLog, ServerOutput, specSecrets } from './logs.ts';
import { ServerStats } from './metrics.ts';
import type { VerdictStore } from './negotiation.ts';
import { Problems } from './problems.ts';
import { ResultCache } from './result-cache.ts';
import { transition, type ConnectionEvent } from './states.ts';
import { ProtocolTrace } from './trace.ts';

/** What a connection needs from the manager around it. */
export interface ConnectionContext {
  root: string;
  logsDir: string;
  outputsDir: string;
  /** Where server process groups are recorded while they run; not recorded when absent. */
  serversDir?: string | undefined;
  /** OAuth tokens and registrations; in memory only when absent. */
  authDir: string | undefined;
  maxOutputChars: number;
  maxLogBytes: number;
  logLevel: () => McpLogLevel;
  health: Health;
  verdicts: VerdictStore;
  /** May an `auto` server of unknown era be probed (see `McpWorkerData.probe`). */
  probe: boolean;
  /** The servers' catalogs kept from earlier runs (see kept-catalog.ts). */
  kept: KeptCatalogs;
  side: (server: string) => Omit<ClientSide, 'listChanged' | 'serverLog'> & {
    /** Where a server's log messages go besides its log file (the gateway's consumers). */
    forwardLog?: ClientSide['serverLog'];
  };
  /** The status, or one part of the catalog, changed. */
  changed: (connection: ServerBase, what: 'status' | CatalogPart) => void;
  log: (
    level: 'debug' | 'info' | 'warn' | 'error',
    msg: string,
    data?: Record<string, unknown>,
  ) => void;
}

/** The lifecycle event that keeps a gated server where the config puts it, if it is gated. */
export const gateEventOf = (spec: McpServerSpec): ConnectionEvent | undefined =>
  spec.gate === 'disabled' ? 'disable' : spec.gate === 'untrusted' ? 'distrust' : undefined;

/**
 * What one MCP server holds whatever its state: its spec, log, protocol trace, problems, result
 * cache, metrics, call queue and catalog, the link while connected, and the views of them
 * (`status()`, its tools, calls). `ServerConnection` adds the lifecycle that moves it.
 */
export class ServerBase {
  state: McpServerState;
  link: ServerLink | undefined;
  readonly limiter: Limiter;
  readonly stats = new ServerStats();
  readonly log: ServerLog;
  readonly trace: ProtocolTrace;
  readonly problems = new Problems();
  readonly results = new ResultCache();
  readonly keeper: CatalogKeeper;
  /** Per tool, what its calls were seen to do; kept across restarts of the server. */
  protected readonly facts = new Map<string, Set<McpToolFact>>();
  /** Why the last connection ended, worded to follow `server "x" `. */
  dropReason = 'closed the connection';
  protected readonly output: ServerOutput;
  protected readonly restarts: Restarts;
  protected kind: McpTransportKind;
  protected generation = 0;
  protected startedAt: number | null = null;
  protected lastError: { message: string; at: number } | null = null;
  protected stopHealth: (() => void) | undefined;
  protected attempt: Promise<void> | undefined;
  /** Started by hand: an authorization may send the user to a browser. */
  protected interactive = false;
  /** A browser authorization waits here (state `needs-auth` meanwhile). */
  protected authUrl: string | null = null;
  /** The attempt in progress: its deadline, and whether the browser was asked. */
  protected starting: StartAttempt | undefined;
  /**
   * Where the catalog held comes from: the server itself in this run (`live`), or the file kept
   * from an earlier run while the server is still starting (`kept`); `none` without one.
   */
  catalogSource: McpCatalogSource = 'none';
  /** The kept catalog adopted while the server starts (its serverInfo and instructions too). */
  protected kept: KeptCatalog | undefined;
  /** How the live catalog differed from the kept one it replaced, until announced. */
  protected revision: CatalogRevision | undefined;

  constructor(
    public spec: McpServerSpec,
    protected readonly ctx: ConnectionContext,
  ) {
    this.state = transition('stopped', gateEventOf(spec) ?? 'stop')!;
    this.kind = spec.transport;
    this.limiter = new Limiter(spec.maxConcurrency);
    this.restarts = new Restarts(ctx.health);
    // A server's stderr can quote its own credentials: neither its log, which `niffler mcp logs`
    // prints, nor its last error, nor its trace holds them.
    const file = path.join(ctx.logsDir, logFileName(spec.name));
    this.log = new ServerLog(file, ctx.maxLogBytes, this.redact);
    this.output = new ServerOutput(this.log);
    this.trace = new ProtocolTrace(this.redact, this.traceLog());
    this.keeper = new CatalogKeeper(
      {
        changed: (part) => {
          if (part === 'tools') this.results.clear();
          this.keep();
          this.ctx.changed(this, part);
          this.ctx.changed(this, 'status');
        },
        note: (problem) => this.note(problem),
        log: (text) => this.log.write('niffler', text),
      },
      this.trace,
    );
  }

  get name(): string {
    return this.spec.name;
  }

  get client(): Client | undefined {
    return this.link?.client;
  }

  get catalog(): Catalog {
    return this.keeper.catalog;
  }

  /** `text` without this server's secret values, then without token-shaped strings. */
  readonly redact = (text: string): string =>
    redactString(redactKnown(text, specSecrets(this.spec)));

  /** Every tool the server offers (which of them a consumer sees is main's to decide). */
  get tools(): Tool[] {
    return this.catalog.tools;
  }

  /** What calls of `tool` were seen to do (see `McpToolFact`). */
  factsOf(tool: string): McpToolFact[] | undefined {
    const facts = this.facts.get(tool);
    return facts ? [...facts] : undefined;
  }

  /** A request of this server (elicitation, sampling, roots) during a call: its tool's fact. */
  noteRequest(fact: 'elicitation' | 'sampling' | 'roots'): void {
    const tool = relatedCall(this.name)?.tool;
    if (tool) this.observe(tool, fact);
  }

  /** Records that a call of `tool` did `fact`; the first time, its tools count as changed. */
  observe(tool: string, fact: McpToolFact): void {
    const facts = this.facts.get(tool) ?? new Set<McpToolFact>();
    if (facts.has(fact)) return;
    facts.add(fact);
    this.facts.set(tool, facts);
    this.ctx.changed(this, 'tools');
  }

  /** A tool of the catalog by its own name. */
  tool(name: string): Tool | undefined {
    return this.keeper.tool(name);
  }

  get processId(): number | null {
    return this.link?.pid ?? null;
  }

  get lastErrorMessage(): string | undefined {
    return this.lastError?.message;
  }

  /**
   * Offers the catalog kept from an earlier run until the server's own arrives (a cold start
   * builds its first request from it); `adoptKept` reads it for this very definition, if any.
   */
  adoptKept(): boolean {
    const kept = this.ctx.kept.read(this.spec);
    if (!kept) return false;
    this.kept = kept;
    this.keeper.catalog = kept.catalog;
    this.catalogSource = 'kept';
    return true;
  }

  /** The live catalog replaced the kept one: how they differ is announced once (`takeRevision`). */
  protected replacedKept(): void {
    if (this.catalogSource === 'kept' && this.kept) {
      const revision = catalogRevision(this.kept.catalog, this.catalog);
      if (revision) {
        this.revision = revision;
        this.log.write(
          'niffler',
          `the tools changed since they were kept: ${describeRevision(revision)}`,
        );
      }
    }
    this.kept = undefined;
    this.catalogSource = 'live';
    this.keep();
  }

  /** The kept catalog stands for a server that did not start: it is withdrawn, with a log line. */
  protected dropKept(why: string): void {
    if (this.catalogSource !== 'kept') return;
    this.kept = undefined;
    this.catalogSource = 'none';
    this.keeper.catalog = EMPTY_CATALOG;
    const message = `its kept catalog is withdrawn: ${why}`;
    this.log.write('niffler', message);
    this.ctx.log('warn', 'kept catalog withdrawn', { server: this.name, why });
    this.ctx.changed(this, 'tools');
  }

  /** How the live catalog differed from the kept one, once (see `CatalogRevision`). */
  takeRevision(): CatalogRevision | undefined {
    const revision = this.revision;
    this.revision = undefined;
    return revision;
  }

  /** Keeps the live catalog on disk for the next cold start (unchanged: nothing is written). */
  protected keep(): void {
    const client = this.link?.client;
    if (this.catalogSource !== 'live' || this.state !== 'ready' || !client) return;
    const info = client.getServerVersion();
    this.ctx.kept.save(this.spec, {
      catalog: this.catalog,
      serverInfo: info ? { name: info.name, version: info.version } : null,
      instructions: client.getInstructions() ?? null,
      freshUntil: this.keeper.freshness(),
    });
  }

  status(): McpServerStatus {
    const client = this.link?.client;
    const kept = this.catalogSource === 'kept' ? this.kept : undefined;
    const info = client?.getServerVersion() ?? kept?.serverInfo;
    return {
      name: this.spec.name,
      displayName: this.spec.displayName,
      transport: this.kind,
      state: this.state,
      pid: this.processId,
      startedAt: this.startedAt,
      restarts: this.restarts.count,
      lastError: this.lastError,
      nextRestartAt: this.restarts.nextAt,
      inFlight: this.limiter.inFlight,
      queued: this.limiter.queued,
      tools: this.tools.length,
      prompts: this.catalog.prompts.length,
      resources: this.catalog.resources.length,
      serverInfo: info ? { name: info.name, version: info.version } : null,
      instructions: client?.getInstructions() ?? kept?.instructions ?? null,
      catalog: this.catalogSource,
      protocolVersion: (this.state === 'ready' && client?.getNegotiatedProtocolVersion()) || null,
      problems: this.problems.list(),
      cache: this.results.stats(),
      ...this.stats.total.snapshot(),
      toolMetrics: this.stats.tools(),
      logFile: this.log.file,
      ...(this.authUrl ? { authUrl: this.authUrl } : {}),
    };
  }

  /** The spec changed where no restart is needed (`trace`, `cache`): applies it. */
  updated(): void {
    this.trace.setLog(this.traceLog());
    this.results.clear();
  }

  /**
   * Resolves once a start in progress has settled, or after `waitMs` (when given), or when
   * `signal` aborts; at once when none is in progress.
   */
  async untilStarted(signal: AbortSignal, waitMs?: number): Promise<void> {
    if (this.state !== 'starting' || !this.attempt) return;
    let timer: NodeJS.Timeout | undefined;
    const bounded =
      waitMs === undefined
        ? this.attempt
        : Promise.race([
            this.attempt,
            new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs))),
          ]);
    try {
      await abortable(bounded, signal);
    } catch {
      // Aborted, or the attempt failed: the call says which.
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs one tool call: queues for a slot, maps every failure (the manager waits for a start). */
  call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolResult> {
    return inCallScope(
      { server: this.name, tool, asker: options.asker, signal: options.signal },
      (scope) => callTool(this, tool, args, options, this.ctx, scope),
    );
  }

  /** Lists the tools again now (after `HeaderMismatch`: the server's schemas moved on). */
  relistTools(signal: AbortSignal): Promise<void> {
    return this.keeper.refresh('tools', signal);
  }

  /** Tells the server its roots changed (2025-era `notifications/roots/list_changed`). */
  async rootsChanged(): Promise<boolean> {
    const link = this.link;
    if (this.state !== 'ready' || !link || link.isModern) return false;
    await link.client.sendRootsListChanged();
    return true;
  }

  async setLogLevel(level: McpLogLevel): Promise<void> {
    const link = this.link;
    if (this.state !== 'ready' || !link || link.isModern) return;
    if (link.client.getServerCapabilities()?.logging) await link.client.setLoggingLevel(level);
  }

  /** Records a protocol problem of this server (shown by `mcp status`, written to its log). */
  note(problem: string): void {
    if (!this.problems.add(problem)) return;
    this.log.write('niffler', problem);
    this.ctx.log('warn', 'server problem', { server: this.name, problem });
    this.ctx.changed(this, 'status');
  }

  /** Words a lost connection for a call that was in flight. */
  describeLoss(method: string): string {
    return describeLoss(this, method, this.ctx.health);
  }

  protected traceLog(): ((line: string) => void) | undefined {
    return this.spec.trace ? (line) => this.log.write('trace', line) : undefined;
  }
}

/** A revision in words: `+a, -b, ~c` (added, removed, changed). */
const describeRevision = (revision: CatalogRevision): string =>
  [
    ...revision.added.map((name) => `+${name}`),
    ...revision.removed.map((name) => `-${name}`),
    ...revision.changed.map((name) => `~${name}`),
  ].join(', ');
