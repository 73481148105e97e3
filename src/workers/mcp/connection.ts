import type { McpTransportKind } from '../protocol/mcp.ts';
import { StartAttempt } from './attempt.ts';
import { authErrorOf, type AuthError } from './auth/errors.ts';
import { awaitAnswer } from './call-scope.ts';
import { AUTH_WAIT_MS } from './auth/provider.ts';
import { describeExit, describeStartFailure } from './describe.ts';
import { watchHealth } from './health.ts';
import { openLink, ProcessExited, type LinkContext } from './link.ts';
import { gateEventOf, ServerBase } from './server-base.ts';
import { transition, type ConnectionEvent } from './states.ts';
import { isProcess, shouldFallBackToSse } from './transports.ts';
import { mark } from '../shared/timeline.ts';

/**
 * One MCP server: its link (SDK `Client` and transport), the lifecycle of `states.ts` (every
 * change goes through `move`), restarts with backoff, the health check, the catalog, the call
 * queue, the protocol trace, the result cache and the metrics.
 */
export class ServerConnection extends ServerBase {
  /** Starts (or, by hand, restarts a failed server); resolves once this attempt has settled. */
  async start(byHand: boolean): Promise<void> {
    const gated = gateEventOf(this.spec);
    if (gated) return this.move(gated);
    if (byHand) this.restarts.reset();
    if (this.state === 'ready') return;
    if ((this.state === 'starting' || this.authUrl) && this.attempt) return this.attempt;
    this.interactive = byHand;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.move(gateEventOf(this.spec) ?? 'stop', false);
    await this.endGeneration('was stopped', () => `server "${this.name}" was stopped`);
    this.keeper.detach(true);
    this.catalogSource = 'none';
    this.kept = undefined;
    this.ctx.changed(this, 'status');
    this.ctx.changed(this, 'tools');
  }

  async restart(): Promise<void> {
    await this.stop();
    this.restarts.count++;
    await this.start(true);
  }

  /** Moves the lifecycle along `states.ts` (an event the table lacks is logged, not taken). */
  private move(event: ConnectionEvent, announce = true): void {
    const next = transition(this.state, event);
    if (next === undefined)
      this.ctx.log('error', 'unexpected lifecycle event', {
        server: this.name,
        state: this.state,
        event,
      });
    else this.state = next;
    if (announce) this.ctx.changed(this, 'status');
  }

  private connect(): Promise<void> {
    const gen = ++this.generation;
    this.clearTimers();
    this.move('start');
    const attempt = this.attemptStart(gen);
    this.attempt = attempt;
    return attempt;
  }

  private async attemptStart(gen: number): Promise<void> {
    const attempt = new StartAttempt(this.name, this.spec.startupTimeoutMs);
    this.starting = attempt;
    try {
      await this.open(gen, attempt.signal);
    } catch (error) {
      if (gen !== this.generation) return;
      const reason = attempt.abortReason ?? this.describeStartFailure(error);
      return this.startFailed(error, reason, attempt.askedBrowser);
    } finally {
      attempt.dispose();
      if (this.starting === attempt) this.starting = undefined;
    }
    if (gen !== this.generation) return;
    const client = this.link!.client;
    this.startedAt = Date.now();
    this.results.clear();
    this.stopHealth = watchHealth(client, this.ctx.health, (reason) => this.lost(gen, reason));
    this.link!.listen((reason) => this.lost(gen, reason));
    const fields = { server: this.name, tools: this.tools.length, pid: this.processId };
    this.ctx.log('info', 'server ready', fields);
    mark(`server ready ${this.name}`);
    // The catalog first: whoever waits for `ready` finds the tools announced already.
    this.move('connected', false);
    this.replacedKept();
    this.ctx.changed(this, 'tools');
    this.ctx.changed(this, 'status');
  }

  private async startFailed(error: unknown, reason: string, waited: boolean): Promise<void> {
    const authError = authErrorOf(error);
    const next = ++this.generation;
    await this.teardown();
    // Stopped or restarted by hand while the failed attempt was being closed: that decides.
    if (next !== this.generation) return;
    const message = `server "${this.name}" ${reason}`;
    this.dropKept('the server did not start');
    if (authError || waited)
      this.authFailed(authError?.kind ?? 'needs-auth', authError?.message ?? message);
    else this.failed(message);
  }

  private async open(gen: number, signal: AbortSignal): Promise<void> {
    try {
      await this.openWith(this.spec.transport, gen, signal);
    } catch (error) {
      const refused = shouldFallBackToSse(error);
      if (this.spec.transport !== 'http' || signal.aborted || !refused) throw error;
      const why = (error as Error).message;
      this.log.write('niffler', `Streamable HTTP refused (${why}); trying SSE`);
      await this.openWith('sse', gen, signal);
    }
  }

  private async openWith(kind: McpTransportKind, gen: number, signal: AbortSignal): Promise<void> {
    if (gen !== this.generation) throw new Error('stopped while starting');
    this.output.reset();
    this.problems.clear();
    const listed = this.keeper.watchToolListing();
    const { link, catalog } = await openLink(this.spec, kind, this.linkContext(gen, kind), signal);
    if (gen !== this.generation) {
      await link.close();
      throw new Error('stopped while starting');
    }
    this.link = link;
    this.kind = kind;
    this.keeper.attach(link.client, catalog, listed());
  }

  private linkContext(gen: number, kind: McpTransportKind): LinkContext {
    const current = () => gen === this.generation;
    return {
      root: this.ctx.root,
      authDir: this.ctx.authDir,
      killGraceMs: this.ctx.health.killGraceMs,
      verdicts: this.ctx.verdicts,
      probe: this.ctx.probe,
      logLevel: this.ctx.logLevel(),
      side: this.clientSide(current),
      auth: {
        interactive: () => this.interactive,
        onAuthUrl: (url) => current() && this.authWaiting(url),
        onNeedsAuth: (error) => this.authLost(gen, error),
      },
      trace: this.trace,
      io: {
        onStderr: (text) => this.output.stderr(text),
        onNoise: (line) => this.output.noise(kind, line),
        serversDir: this.ctx.serversDir,
        spill: { dir: this.ctx.outputsDir, keepChars: () => this.ctx.maxOutputChars },
      },
      onClose: () => this.lost(gen, describeExit(this.exitOfLink(), this.kind)),
      onError: (error) => this.log.write('niffler', `transport error: ${error.message}`),
      log: (text) => this.log.write('niffler', text),
      note: (problem) => this.note(problem),
    };
  }

  /** What this server's requests and notifications reach; its requests mark its tools' facts. */
  private clientSide(current: () => boolean): LinkContext['side'] {
    const { forwardLog, ...base } = this.ctx.side(this.name);
    return {
      roots: () => {
        this.noteRequest('roots');
        return base.roots();
      },
      elicit: (elicitation, signal) => {
        this.noteRequest('elicitation');
        return awaitAnswer(this.name, () => base.elicit(elicitation, signal));
      },
      sample: (params, signal) => {
        this.noteRequest('sampling');
        return awaitAnswer(this.name, () => base.sample(params, signal));
      },
      serverLog: (level, logger, data) => {
        this.output.serverLog(level, logger, data);
        forwardLog?.(level, logger, data);
      },
      listChanged: (part) => current() && this.keeper.changed(part),
    };
  }

  /** The connection of generation `gen` ended by itself (exit, drop, hang). */
  private lost(gen: number, reason: string): void {
    if (gen !== this.generation || this.state !== 'ready') return;
    const delay = this.restarts.failure();
    this.lastError = { message: `server "${this.name}" ${reason}`, at: Date.now() };
    this.move(delay === null ? 'gave-up' : 'lost', false);
    const closed = this.endGeneration(reason, () => this.describeLoss('tools/call'));
    // The restart belongs to this generation: a stop or restart while the old process is still
    // being ended (up to killGraceMs) makes it moot.
    const next = this.generation;
    this.ctx.log('warn', 'server lost', { server: this.name, reason });
    this.ctx.changed(this, 'status');
    void closed.then(() => this.schedule(delay, next));
  }

  /** An authorization waits for the browser at `url`, or (null) is over. */
  private authWaiting(url: string | null): void {
    this.authUrl = url;
    // A ready server stays ready while a step-up waits: its other calls keep going.
    if (this.state !== 'ready') this.move(url ? 'needs-auth' : 'authorized', false);
    if (url) this.log.write('niffler', 'waiting for the user to authorize in a browser');
    if (url) this.starting?.waitForBrowser(AUTH_WAIT_MS);
    else this.starting?.startupDeadline();
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
    this.move(kind === 'needs-auth' ? 'needs-auth' : 'refused');
  }

  private failed(message: string): void {
    this.lastError = { message, at: Date.now() };
    this.log.write('niffler', message);
    this.ctx.log('warn', 'server failed to start', { server: this.name, message });
    const delay = this.restarts.failure();
    this.move(delay === null ? 'gave-up' : 'retry', false);
    this.schedule(delay, this.generation);
    this.ctx.changed(this, 'status');
  }

  private schedule(delay: number | null, gen: number): void {
    if (delay === null || gen !== this.generation) return;
    this.restarts.schedule(delay, () => {
      this.interactive = false;
      void this.connect();
    });
  }

  private exitOfLink(): ProcessExited['exit'] | undefined {
    const transport = this.link?.transport;
    return isProcess(transport) ? transport.exit : undefined;
  }

  private describeStartFailure(error: unknown): string {
    const failure = {
      message: (error as Error).message ?? String(error),
      exit: error instanceof ProcessExited ? error.exit : undefined,
    };
    return describeStartFailure(failure, this.kind, this.output.stderrTail, this.redact);
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
    this.restarts.cancel();
    this.stopHealth?.();
    this.stopHealth = undefined;
    this.keeper.detach(false);
  }

  private async teardown(): Promise<void> {
    const link = this.link;
    this.link = undefined;
    this.authUrl = null;
    this.startedAt = null;
    this.results.clear();
    try {
      await link?.close();
    } catch (error) {
      this.log.write('niffler', `closing failed: ${(error as Error).message}`);
    }
  }
}
