import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type {
  McpLogLevel,
  McpServerSpec,
  McpServerState,
  McpServerStatus,
  McpTransportKind,
} from '../protocol/mcp.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { authErrorOf, type AuthError } from './auth/errors.ts';
import { AUTH_WAIT_MS, type ServerAuth } from './auth/provider.ts';
import { serverAuthFor } from './auth/setup.ts';
import { RestartPolicy, type Health } from './backoff.ts';
import { callTool, type CallOptions } from './call.ts';
import { listCatalog, listPart, type Catalog, type CatalogPart } from './catalog.ts';
import {
  CLIENT_CAPABILITIES,
  CLIENT_INFO,
  installClientHandlers,
  type ClientSide,
} from './client-handlers.ts';
import { Limiter } from './limiter.ts';
import { redactKnown, redactString } from '../shared/redact.ts';
import { logFileName, RotatingLog, specSecrets } from './logs.ts';
import { ServerStats } from './metrics.ts';
import { isToolIncluded } from './naming.ts';
import { ProcessTransport } from './process-transport.ts';
import { createTransport, shouldFallBackToSse } from './transports.ts';

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
  side: (server: string) => Omit<ClientSide, 'listChanged' | 'serverLog'>;
  /** The status, or one part of the catalog, changed. */
  changed: (connection: ServerConnection, what: 'status' | CatalogPart) => void;
  log: (
    level: 'debug' | 'info' | 'warn' | 'error',
    msg: string,
    data?: Record<string, unknown>,
  ) => void;
}

const EMPTY: Catalog = { tools: [], prompts: [], resources: [] };
/**
 * How long after a list_changed the catalog is listed again; notifications within it share one
 * listing. A server sends a burst in one go, but a loaded machine may deliver it in pieces.
 */
const REFRESH_DEBOUNCE_MS = 150;
const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
/**
 * The SDK's own timeout for the requests of a start (its default is 60 s): the longest a timer
 * can wait, so it never fires. The start's deadline is the attempt's abort signal alone, whose
 * timer a browser authorization re-arms; the SDK's timer cannot be re-armed.
 */
const NO_SDK_TIMEOUT = 2 ** 31 - 1;

const abortable = <T>(promise: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });

/**
 * One MCP server: its SDK `Client` and transport, the state machine
 * (stopped → starting → ready → degraded → failed), restarts with backoff, the health ping,
 * the catalog (refreshed on `list_changed`), the call queue and the metrics.
 */
export class ServerConnection {
  state: McpServerState;
  catalog: Catalog = EMPTY;
  client: Client | undefined;
  readonly limiter: Limiter;
  readonly stats = new ServerStats();
  readonly log: RotatingLog;
  /** Why the last connection ended, worded to follow `server "x" `. */
  dropReason = 'closed the connection';
  private transport: Transport | undefined;
  private kind: McpTransportKind;
  private generation = 0;
  private pid: number | null = null;
  private startedAt: number | null = null;
  private restarts = 0;
  private lastError: { message: string; at: number } | null = null;
  private nextRestartAt: number | null = null;
  private restartTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private readonly refreshTimers = new Map<CatalogPart, NodeJS.Timeout>();
  private readonly policy: RestartPolicy;
  private attempt: Promise<void> | undefined;
  private stderrTail: string[] = [];
  private schemasOf: Catalog | undefined;
  private schemas = new Map<string, object | undefined>();
  private auth: ServerAuth | undefined;
  /** Started by hand: an authorization may send the user to a browser. */
  private interactive = false;
  /** A browser authorization waits here (state `needs-auth` meanwhile). */
  private authUrl: string | null = null;
  private stateBeforeAuth: McpServerState = 'starting';
  /** The attempt in progress: re-arms its deadline, and records that the browser was asked. */
  private starting: StartAttempt | undefined;

  constructor(
    public spec: McpServerSpec,
    private readonly ctx: ConnectionContext,
  ) {
    this.state = gateState(spec) ?? 'stopped';
    this.kind = spec.transport;
    this.limiter = new Limiter(spec.maxConcurrency);
    this.policy = new RestartPolicy(ctx.health);
    // A server's stderr can quote its own credentials (a debug print of its env, a failed request
    // with its headers): neither its log, which `niffler mcp logs` prints, nor its last error holds
    // them.
    this.log = new RotatingLog(
      path.join(ctx.logsDir, logFileName(spec.name)),
      ctx.maxLogBytes,
      this.redact,
    );
  }

  get name(): string {
    return this.spec.name;
  }

  /** `text` without this server's secret values, then without token-shaped strings. */
  private readonly redact = (text: string): string =>
    redactString(redactKnown(text, specSecrets(this.spec)));

  /** Tools after `includeTools` / `excludeTools`. */
  get tools() {
    return this.catalog.tools.filter((t) =>
      isToolIncluded(t.name, this.spec.includeTools, this.spec.excludeTools),
    );
  }

  /** The server process while one runs (what `status()` reports, without building it all). */
  get processId(): number | null {
    return this.pid;
  }

  /** The last error's message, if any (likewise). */
  get lastErrorMessage(): string | undefined {
    return this.lastError?.message;
  }

  /** The output schema of a tool, looked up in a map rebuilt only when the catalog changes. */
  outputSchema(tool: string): object | undefined {
    if (this.schemasOf !== this.catalog) {
      this.schemasOf = this.catalog;
      this.schemas = new Map(this.catalog.tools.map((t) => [t.name, t.outputSchema]));
    }
    return this.schemas.get(tool);
  }

  status(): McpServerStatus {
    const info = this.client?.getServerVersion();
    return {
      name: this.spec.name,
      displayName: this.spec.displayName,
      transport: this.kind,
      state: this.state,
      pid: this.pid,
      startedAt: this.startedAt,
      restarts: this.restarts,
      lastError: this.lastError,
      nextRestartAt: this.nextRestartAt,
      inFlight: this.limiter.inFlight,
      queued: this.limiter.queued,
      tools: this.tools.length,
      prompts: this.catalog.prompts.length,
      resources: this.catalog.resources.length,
      serverInfo: info ? { name: info.name, version: info.version } : null,
      instructions: this.client?.getInstructions() ?? null,
      ...this.stats.total.snapshot(),
      toolMetrics: this.stats.tools(),
      logFile: this.log.file,
      ...(this.authUrl ? { authUrl: this.authUrl } : {}),
    };
  }

  /** Starts (or, by hand, restarts a failed server); resolves once this attempt has settled. */
  async start(byHand: boolean): Promise<void> {
    const gated = gateState(this.spec);
    if (gated) return this.setState(gated);
    if (byHand) this.policy.reset();
    if (this.state === 'ready') return;
    if ((this.state === 'starting' || this.authUrl) && this.attempt) return this.attempt;
    this.interactive = byHand;
    await this.connect();
  }

  async stop(state: McpServerState = gateState(this.spec) ?? 'stopped'): Promise<void> {
    this.state = state;
    await this.endGeneration('was stopped', () => `server "${this.name}" was stopped`);
    this.catalog = EMPTY;
    this.ctx.changed(this, 'status');
    this.ctx.changed(this, 'tools');
  }

  async restart(): Promise<void> {
    await this.stop();
    this.restarts++;
    await this.start(true);
  }

  /** Runs one tool call: waits for a start in progress, queues for a slot, maps every failure. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions,
  ): Promise<ToolResult> {
    if (this.state === 'starting' && this.attempt)
      await abortable(this.attempt, options.signal).catch(() => undefined);
    return callTool(this, tool, args, options, this.ctx);
  }

  /** Tells the server its roots changed (`notifications/roots/list_changed`). */
  async rootsChanged(): Promise<boolean> {
    if (this.state !== 'ready' || !this.client) return false;
    await this.client.sendRootsListChanged();
    return true;
  }

  async setLogLevel(level: McpLogLevel): Promise<void> {
    if (this.state === 'ready' && this.client?.getServerCapabilities()?.logging)
      await this.client.setLoggingLevel(level);
  }

  /** Words a lost connection for a call that was in flight. */
  describeLoss(method: string): string {
    const then =
      this.state === 'failed'
        ? `; it failed ${this.ctx.health.maxFailures} times within ${seconds(this.ctx.health.failureWindowMs)} and stays stopped until started by hand (niffler mcp start ${this.name})`
        : this.state === 'stopped'
          ? ''
          : '; restarting';
    return `server "${this.name}" ${this.dropReason} during ${method}${then}`;
  }

  private setState(state: McpServerState): void {
    this.state = state;
    this.ctx.changed(this, 'status');
  }

  private connect(): Promise<void> {
    const gen = ++this.generation;
    this.clearTimers();
    this.nextRestartAt = null;
    if (this.state !== 'degraded') this.state = 'starting';
    this.ctx.changed(this, 'status');
    const attempt = this.attemptStart(gen);
    this.attempt = attempt;
    return attempt;
  }

  private async attemptStart(gen: number): Promise<void> {
    const timeout = new AbortController();
    const ms = this.spec.startupTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const arm = (after: number, message: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => timeout.abort(new Error(message)), after);
    };
    arm(ms, `did not start within ${seconds(ms)} (startupTimeout)`);
    const attempt: StartAttempt = { rearm: arm, askedBrowser: false };
    this.starting = attempt;
    try {
      await this.open(gen, timeout.signal);
    } catch (error) {
      if (gen !== this.generation) return;
      const authError = authErrorOf(error);
      // Not `this.authUrl`: the flow that failed has cleared it already.
      const waited = attempt.askedBrowser;
      const reason = timeout.signal.aborted
        ? (timeout.signal.reason as Error).message
        : this.describeStartFailure(error);
      const next = ++this.generation;
      await this.teardown();
      // Stopped or restarted by hand while the failed attempt was being closed: that decides.
      if (next !== this.generation) return;
      if (authError || waited)
        this.authFailed(
          authError?.kind ?? 'needs-auth',
          authError?.message ?? `server "${this.name}" ${reason}`,
        );
      else this.failed(`server "${this.name}" ${reason}`);
      return;
    } finally {
      clearTimeout(timer);
      if (this.starting === attempt) this.starting = undefined;
    }
    if (gen !== this.generation) return;
    this.state = 'ready';
    this.startedAt = Date.now();
    this.startPing(gen);
    this.ctx.log('info', 'server ready', {
      server: this.name,
      tools: this.tools.length,
      pid: this.pid,
    });
    // The catalog first: whoever waits for `ready` finds the tools announced already.
    this.ctx.changed(this, 'tools');
    this.ctx.changed(this, 'status');
  }

  private async open(gen: number, signal: AbortSignal): Promise<void> {
    try {
      await this.openWith(this.spec.transport, gen, signal);
    } catch (error) {
      if (this.spec.transport !== 'http' || signal.aborted || !shouldFallBackToSse(error))
        throw error;
      this.log.write(
        'niffler',
        `Streamable HTTP refused (${(error as Error).message}); trying SSE`,
      );
      await this.teardown();
      await this.openWith('sse', gen, signal);
    }
  }

  private async openWith(kind: McpTransportKind, gen: number, signal: AbortSignal): Promise<void> {
    if (gen !== this.generation) throw new Error('stopped while starting');
    const client = new Client(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES });
    installClientHandlers(client, {
      ...this.ctx.side(this.name),
      serverLog: (level, logger, data) =>
        this.log.write(
          `log:${level}${logger ? `:${logger}` : ''}`,
          typeof data === 'string' ? data : JSON.stringify(data),
        ),
      listChanged: (part) => this.scheduleRefresh(part, gen),
    });
    this.stderrTail = [];
    const authed = serverAuthFor(this.spec, kind, this.ctx, {
      interactive: () => this.interactive,
      onAuthUrl: (url) => this.authWaiting(gen, url),
      onNeedsAuth: (error) => this.authLost(gen, error),
    });
    this.auth = authed?.auth;
    const transport = createTransport(this.spec, kind, {
      fetch: authed?.fetch,
      root: this.ctx.root,
      killGraceMs: this.ctx.health.killGraceMs,
      serversDir: this.ctx.serversDir,
      spill: { dir: this.ctx.outputsDir, keepChars: () => this.ctx.maxOutputChars },
      onStderr: (text) => {
        this.log.write('stderr', text);
        this.stderrTail = [...this.stderrTail, ...text.split('\n').filter((l) => l.trim())].slice(
          -5,
        );
      },
      onNoise: (line) =>
        this.log.write('warning', `ignored non-protocol output on stdout: ${line.slice(0, 2000)}`),
    });
    this.client = client;
    this.transport = transport;
    this.kind = kind;
    client.onclose = () => this.lost(gen, this.describeExit());
    client.onerror = (error) => this.log.write('niffler', `transport error: ${error.message}`);
    // On Streamable HTTP an authorization, the browser included, runs inside `initialize`.
    await abortable(client.connect(transport, { signal, timeout: NO_SDK_TIMEOUT }), signal);
    this.pid = transport instanceof ProcessTransport ? transport.pid : null;
    if (client.getServerCapabilities()?.logging)
      await client
        .setLoggingLevel(this.ctx.logLevel(), { signal, timeout: NO_SDK_TIMEOUT })
        .catch((error: unknown) =>
          this.log.write('niffler', `logging/setLevel failed: ${(error as Error).message}`),
        );
    this.catalog = await abortable(
      listCatalog(client, { signal, timeout: NO_SDK_TIMEOUT }),
      signal,
    );
  }

  /** The connection of generation `gen` ended by itself (exit, drop, hang). */
  private lost(gen: number, reason: string): void {
    if (gen !== this.generation || this.state !== 'ready') return;
    const delay = this.policy.next(Date.now());
    this.lastError = { message: `server "${this.name}" ${reason}`, at: Date.now() };
    this.state = delay === null ? 'failed' : 'degraded';
    const closed = this.endGeneration(reason, () => this.describeLoss('tools/call'));
    // The restart belongs to this generation: a stop or restart while the old process is still
    // being ended (up to killGraceMs) makes it moot.
    const next = this.generation;
    this.ctx.log('warn', 'server lost', { server: this.name, reason });
    this.ctx.changed(this, 'status');
    void closed.then(() => this.schedule(delay, next));
  }

  /** An authorization waits for the browser at `url`, or (null) is over. */
  private authWaiting(gen: number, url: string | null): void {
    if (gen !== this.generation) return;
    // A ready server stays ready while a step-up waits: its other calls keep going.
    if (url && !this.authUrl) this.stateBeforeAuth = this.state;
    this.authUrl = url;
    if (this.stateBeforeAuth !== 'ready') this.state = url ? 'needs-auth' : this.stateBeforeAuth;
    if (url) {
      this.log.write('niffler', 'waiting for the user to authorize in a browser');
      if (this.starting) this.starting.askedBrowser = true;
      this.starting?.rearm(
        AUTH_WAIT_MS,
        `was not authorized within ${seconds(AUTH_WAIT_MS)}; run niffler mcp login ${this.name}`,
      );
    } else
      this.starting?.rearm(
        this.spec.startupTimeoutMs,
        `did not start within ${seconds(this.spec.startupTimeoutMs)} (startupTimeout)`,
      );
    this.ctx.changed(this, 'status');
  }

  /** A ready server lost its authorization and nobody can be asked: it waits for a login. */
  private authLost(gen: number, error: AuthError): void {
    if (gen !== this.generation || this.state !== 'ready') return;
    void this.endGeneration('needs authorization', () => error.message);
    this.authFailed(error.kind, error.message);
  }

  /** OAuth failed in a way restarting will not fix: no automatic restart. */
  private authFailed(kind: AuthError['kind'], message: string): void {
    this.authUrl = null;
    this.lastError = { message, at: Date.now() };
    this.log.write('niffler', message);
    this.ctx.log('warn', 'server needs authorization', { server: this.name, message });
    this.state = kind === 'needs-auth' ? 'needs-auth' : 'failed';
    this.ctx.changed(this, 'status');
  }

  private failed(message: string): void {
    this.lastError = { message, at: Date.now() };
    this.log.write('niffler', message);
    this.ctx.log('warn', 'server failed to start', { server: this.name, message });
    const delay = this.policy.next(Date.now());
    if (delay === null) this.state = 'failed';
    this.schedule(delay, this.generation);
    this.ctx.changed(this, 'status');
  }

  private schedule(delay: number | null, gen: number): void {
    if (delay === null || gen !== this.generation) return;
    this.nextRestartAt = Date.now() + delay;
    this.restartTimer = setTimeout(() => {
      this.restarts++;
      this.interactive = false;
      void this.connect();
    }, delay);
  }

  private describeExit(): string {
    const exit = this.transport instanceof ProcessTransport ? this.transport.exit : undefined;
    if (!exit) return this.kind === 'stdio' ? 'closed its stdout' : 'closed the connection';
    if (exit.limit) return exit.limit;
    return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  }

  private describeStartFailure(error: unknown): string {
    const exit = this.transport instanceof ProcessTransport ? this.transport.exit : undefined;
    // Redacted here, where it becomes the last error (the log redacts its own copy as it writes).
    const tail = this.stderrTail.length ? `: ${this.redact(this.stderrTail.join(' | '))}` : '';
    if (exit) return `${this.describeExit()} during start-up${tail}`;
    return `failed to start: ${this.redact((error as Error).message ?? String(error))}${tail}`;
  }

  private startPing(gen: number): void {
    const { pingIntervalMs, pingTimeoutMs } = this.ctx.health;
    let busy = false;
    this.pingTimer = setInterval(() => {
      if (busy || !this.client) return;
      busy = true;
      this.client
        .ping({ timeout: pingTimeoutMs })
        .catch((error: unknown) => {
          // A JSON-RPC error reply (say, -32601) means the server is alive; a timeout, a closed
          // connection or a network error means it is not.
          const code = error instanceof McpError ? error.code : undefined;
          const alive =
            code !== undefined &&
            code !== (ErrorCode.RequestTimeout as number) &&
            code !== (ErrorCode.ConnectionClosed as number);
          if (alive) return;
          this.lost(
            gen,
            code === (ErrorCode.RequestTimeout as number)
              ? `stopped answering (no reply to ping within ${seconds(pingTimeoutMs)})`
              : `stopped answering (ping failed: ${(error as Error).message})`,
          );
        })
        .finally(() => (busy = false));
    }, pingIntervalMs);
  }

  private scheduleRefresh(part: CatalogPart, gen: number): void {
    clearTimeout(this.refreshTimers.get(part));
    this.refreshTimers.set(
      part,
      setTimeout(() => {
        const timer = this.refreshTimers.get(part);
        // One turn of the loop first: a thread that was kept off the CPU past the window runs its
        // timers before reading what arrived meanwhile, and the rest of the burst may be there.
        // A notification read in that turn schedules anew, and this refresh gives way to it.
        setImmediate(() => {
          if (this.refreshTimers.get(part) !== timer) return;
          this.refreshTimers.delete(part);
          this.refresh(part, gen);
        });
      }, REFRESH_DEBOUNCE_MS),
    );
  }

  private refresh(part: CatalogPart, gen: number): void {
    const client = this.client;
    if (gen !== this.generation || !client) return;
    listPart(client, part)
      .then((items) => {
        if (gen !== this.generation) return;
        this.catalog = { ...this.catalog, [part]: items };
        this.ctx.changed(this, part);
        this.ctx.changed(this, 'status');
      })
      .catch((error: unknown) =>
        this.log.write('niffler', `refreshing ${part} failed: ${(error as Error).message}`),
      );
  }

  /**
   * Ends the connection of this generation: nothing of it acts from now on (its events, timers, a
   * start under way), the calls waiting for a slot fail with `failure()` (told once the reason is
   * set), and it is closed.
   */
  private endGeneration(dropReason: string, failure: () => string): Promise<void> {
    this.generation++;
    this.dropReason = dropReason;
    this.clearTimers();
    this.limiter.rejectAll(new Error(failure()));
    return this.teardown();
  }

  private clearTimers(): void {
    clearTimeout(this.restartTimer);
    clearInterval(this.pingTimer);
    for (const timer of this.refreshTimers.values()) clearTimeout(timer);
    this.refreshTimers.clear();
    this.restartTimer = this.pingTimer = undefined;
    this.nextRestartAt = null;
  }

  private async teardown(): Promise<void> {
    const { client, transport, auth } = this;
    this.client = this.transport = this.auth = undefined;
    this.authUrl = null;
    await auth?.close();
    this.pid = null;
    this.startedAt = null;
    try {
      if (client) await client.close();
      else await transport?.close();
    } catch (error) {
      this.log.write('niffler', `closing failed: ${(error as Error).message}`);
    }
  }
}

/** One start-up attempt, as the authorization hooks see it. */
interface StartAttempt {
  /** Re-arms the attempt's deadline. */
  rearm: (ms: number, message: string) => void;
  /** A browser authorization was asked for during this attempt. */
  askedBrowser: boolean;
}

const gateState = (spec: McpServerSpec): McpServerState | undefined =>
  spec.gate === 'disabled' ? 'disabled' : spec.gate === 'untrusted' ? 'untrusted' : undefined;
