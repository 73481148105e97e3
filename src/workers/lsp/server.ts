import path from 'node:path';
import {
  CancellationTokenSource,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  ShutdownRequest,
  type CancellationToken,
  type Diagnostic,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';
import type { LspServerSpec, LspServerState, LspServerStatus, LspTiming } from '../protocol/lsp.ts';
import { DEFAULT_HEALTH, Restarts } from '../mcp/backoff.ts';
import { Documents, type OpenDocument } from './documents.ts';
import { connectServer, documentSink } from './connect.ts';
import { fromUri, isWorkspaceFile, readDocument, type Place } from './files.ts';
import { initializeParams } from './initialize.ts';
import { Liveness } from './liveness.ts';
import { ServerProcess } from './process.ts';
import { ServerLog } from './server-log.ts';
import { modeOf, ServerDiagnostics, type DiagnosticsMode } from './server-diagnostics.ts';
import { within } from './timing.ts';

const MAX_NOTES = 5;

/** What a server needs of its worker. */
export interface ServerContext {
  place: Place;
  timing: Required<LspTiming>;
  logsDir: string;
  serversDir?: string;
  onStatus: (status: LspServerStatus) => void;
}

/**
 * One language server: its process and JSON-RPC connection (vscode-jsonrpc's framing, the
 * protocol's types), its open documents and diagnostics, and its life — started in the
 * background, restarted with backoff after a crash, a hang on start-up, a flood or a long
 * silence, and reported in words at each step.
 */
export class LanguageServer {
  readonly docs: Documents;
  #spec: LspServerSpec;
  #state: LspServerState = 'stopped';
  #process: ServerProcess | undefined;
  #conn: ProtocolConnection | undefined;
  #mode: DiagnosticsMode | undefined;
  #generation = 0;
  #stopping = false;
  #startedAt: number | null = null;
  #lastError: { message: string; at: number } | null = null;
  #notes: { message: string; at: number }[] = [];
  readonly #liveness: Liveness;
  #watch: NodeJS.Timeout | undefined;
  #warmFile: string | undefined;
  readonly #restarts: Restarts;
  readonly #readyWaiters = new Set<(ok: boolean) => void>();
  readonly #diagnostics: ServerDiagnostics;
  readonly #log: ServerLog;

  constructor(
    spec: LspServerSpec,
    private readonly ctx: ServerContext,
  ) {
    this.#spec = spec;
    this.#restarts = new Restarts({ ...DEFAULT_HEALTH, ...ctx.timing });
    this.#liveness = new Liveness(ctx.timing);
    this.#log = new ServerLog(ctx.logsDir, spec.name);
    this.docs = new Documents(documentSink(() => this.#conn));
    this.#diagnostics = new ServerDiagnostics({
      place: ctx.place,
      mode: () => this.#mode,
      ask: (send, deadline, what) => this.ask(send, deadline, what),
      // Silence after a change can be an answer (nothing new): the probe tells.
      nothingPushed: (since) => {
        if (this.#liveness.lastHeard < since) this.#probe();
      },
    });
  }

  get spec(): LspServerSpec {
    return this.#spec;
  }

  get state(): LspServerState {
    return this.#state;
  }

  /** Serves `file` by its name's ending. */
  serves(file: string): boolean {
    return path.extname(file) in this.#spec.languages;
  }

  languageOf(file: string): string {
    return this.#spec.languages[path.extname(file)] ?? 'plaintext';
  }

  /**
   * Starts it in the background if it is stopped (one that runs, starts, waits to restart or was
   * given up on is left as it is: edits do not drive a broken server round its crashes).
   */
  start(warmFile?: string): void {
    if (warmFile) this.#warmFile = warmFile;
    if (this.#state !== 'stopped') return;
    this.#stopping = false;
    this.#restarts.reset();
    void this.#launch();
  }

  /** Resolves true once it is ready (or degraded), false at `deadline` or when it failed. */
  whenReady(deadline: number): Promise<boolean> {
    if (this.#state === 'ready' || this.#state === 'degraded') return Promise.resolve(true);
    if (this.#state !== 'starting' && this.#restarts.nextAt === null) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.#readyWaiters.delete(done);
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), Math.max(0, deadline - Date.now()));
      this.#readyWaiters.add(done);
    });
  }

  async #launch(): Promise<void> {
    const generation = ++this.#generation;
    this.#setState('starting');
    try {
      const proc = await ServerProcess.spawn(this.#spec, {
        root: this.ctx.place.root,
        ...(this.ctx.serversDir ? { serversDir: this.ctx.serversDir } : {}),
        onStderr: (text) => this.#log.stderr(text),
        onExit: (exit) => {
          if (generation !== this.#generation || this.#stopping) return;
          this.#fail(
            `exited${exit.signal ? ` on ${exit.signal}` : ` with code ${exit.code}`}${this.#log.stderrHint()}`,
          );
        },
      });
      if (generation !== this.#generation) return void proc.kill();
      this.#process = proc;
      this.#startedAt = Date.now();
      const conn = this.#connect(proc, generation);
      const init = await within(
        conn.sendRequest(InitializeRequest.type, initializeParams(this.#spec, this.ctx.place.root)),
        this.ctx.timing.startupTimeoutMs,
      );
      if (generation !== this.#generation) return;
      if (!init)
        return this.#fail(
          `did not answer initialize within ${this.ctx.timing.startupTimeoutMs / 1000} s`,
        );
      void conn.sendNotification(InitializedNotification.type, {});
      this.#mode = modeOf(init);
      this.#setState('ready');
      for (const wake of [...this.#readyWaiters]) wake(true);
      this.#watch = setInterval(() => this.#checkHealth(), 1000);
      this.#watch.unref();
      this.#warm();
    } catch (error) {
      if (generation === this.#generation)
        this.#fail(`could not start: ${(error as Error).message}`);
    }
  }

  /** The JSON-RPC connection over the process's pipes, with the server's requests answered. */
  #connect(proc: ServerProcess, generation: number): ProtocolConnection {
    const conn = connectServer(proc, () => this.#spec, this.ctx.place.root, {
      bytes: (count) => this.#heard(count, generation),
      diagnostics: (params) => this.#pushedNow(params),
      log: (message) => this.#log.message(message),
    });
    this.#conn = conn;
    return conn;
  }

  /** A chunk came from the server: it is alive; a flood ends it. */
  #heard(bytes: number, generation: number): void {
    if (generation !== this.#generation) return;
    const flood = this.#liveness.heard(bytes);
    if (flood) return this.#fail(flood);
    if (this.#state === 'degraded') this.#setState('ready');
  }

  #pushedNow(params: PublishDiagnosticsParams): void {
    const file = fromUri(params.uri);
    if (!file || !isWorkspaceFile(file, this.ctx.place)) {
      this.note(`said something of ${params.uri.slice(0, 120)}, outside the workspace: left out`);
      return;
    }
    this.#diagnostics.pushedNow(file, params);
  }

  /** The diagnostics of the workspace's files it has said something of (pushed), by file. */
  pushedFiles(): Map<string, Diagnostic[]> {
    return this.#diagnostics.pushedFiles();
  }

  /** Opens the warm-up file: the server loads its project now rather than at the first edit. */
  #warm(): void {
    const file = this.#warmFile;
    if (!file) return;
    void readDocument(file, this.ctx.place).then((read) => {
      if (read.ok && this.#state === 'ready')
        this.docs.sync(file, read.text, this.languageOf(file));
    });
  }

  /**
   * Asks the server something, bounded by `deadline`: undefined when no answer came by then (the
   * request is cancelled; a server that said nothing meanwhile is marked degraded).
   */
  async ask<R>(
    send: (conn: ProtocolConnection, token: CancellationToken) => Promise<R>,
    deadline: number,
    what: string,
  ): Promise<R | undefined> {
    const conn = this.#conn;
    if (!conn || (this.#state !== 'ready' && this.#state !== 'degraded')) return undefined;
    const source = new CancellationTokenSource();
    const since = Date.now();
    const sent = send(conn, source.token);
    const generation = this.#generation;
    this.#liveness.track(sent, () => generation === this.#generation);
    try {
      const answer = await within(
        sent.catch(() => undefined),
        deadline - since,
      );
      if (answer === undefined && Date.now() >= deadline) {
        source.cancel();
        if (this.#liveness.lastHeard < since)
          this.#degrade(
            `said nothing for ${((Date.now() - since) / 1000).toFixed(1)} s after ${what} (stopped or stuck?)`,
          );
      }
      return answer;
    } finally {
      source.dispose();
    }
  }

  /**
   * Whether a server that said nothing is alive: a `$/` request, which a server must answer
   * (with an error, MethodNotFound) at once. A silent one is degraded, then ended as hung.
   */
  #probe(): void {
    void this.ask(
      (conn, token) => conn.sendRequest('$/niffler/ping', token).then(() => true),
      Date.now() + 2_000,
      'a liveness probe',
    );
  }

  /**
   * What `doc` had before a change: asked for (pull), or what a pushing server said of this very
   * version already (waiting would take the change's answer for it).
   */
  baseline(doc: OpenDocument, deadline: number): Promise<Diagnostic[] | undefined> {
    return this.#diagnostics.baseline(doc, deadline);
  }

  /** SIGKILL to its process group now (the thread is ending without a shutdown). */
  kill(): void {
    this.#generation++;
    this.#process?.kill();
  }

  /** The diagnostics of `doc` as it now stands, asked for or waited for until `deadline`. */
  diagnosticsOf(doc: OpenDocument, deadline: number): Promise<Diagnostic[] | undefined> {
    return this.#diagnostics.of(doc, deadline);
  }

  /** A note for `lsp status` (a file left out, something said of a file outside the workspace). */
  note(message: string): void {
    const now = Date.now();
    if (this.#notes.some((n) => n.message === message && now - n.at < 60_000)) return;
    this.#notes = [...this.#notes, { message, at: now }].slice(-MAX_NOTES);
    this.#emit();
  }

  #degrade(message: string): void {
    this.#lastError = { message, at: Date.now() };
    if (this.#state === 'ready') this.#setState('degraded');
    else this.#emit();
  }

  /** A server asked something that has said nothing for `hungAfterMs` is ended and restarted. */
  #checkHealth(): void {
    const hung = this.#liveness.hung();
    if (hung) this.#fail(hung);
  }

  /** The server failed: its process group ended, a restart scheduled with backoff (or given up). */
  #fail(message: string): void {
    this.#generation++;
    this.#liveness.forget();
    this.#teardown();
    const delay = this.#restarts.failure();
    this.#lastError = {
      message:
        delay === null
          ? `${message}; gave up after ${this.ctx.timing.maxFailures} failures (a change to its lsp entry, or niffler daemon restart, tries again)`
          : message,
      at: Date.now(),
    };
    if (delay !== null) this.#restarts.schedule(delay, () => void this.#launch());
    this.#setState('failed');
    if (delay === null) for (const wake of [...this.#readyWaiters]) wake(false);
  }

  #teardown(): void {
    clearInterval(this.#watch);
    this.#conn?.dispose();
    this.#conn = undefined;
    this.#process?.kill();
    this.#process = undefined;
    this.#mode = undefined;
    this.#startedAt = null;
    this.docs.clear();
    this.#diagnostics.clear();
  }

  /** Stops it: `shutdown` and `exit` asked for, then its process group ended. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#generation++;
    this.#liveness.forget();
    this.#restarts.cancel();
    clearInterval(this.#watch);
    const conn = this.#conn;
    const proc = this.#process;
    if (conn && proc && !proc.exited) {
      await within(
        conn.sendRequest(ShutdownRequest.type).catch(() => undefined),
        1000,
      );
      void conn.sendNotification(ExitNotification.type).catch(() => undefined);
    }
    conn?.dispose();
    await proc?.close(this.ctx.timing.killGraceMs);
    this.#conn = undefined;
    this.#process = undefined;
    this.docs.clear();
    this.#diagnostics.clear();
    this.#startedAt = null;
    this.#setState('stopped');
  }

  /** Runs `spec` from now on: restarted when it differs in what it runs. */
  async update(spec: LspServerSpec): Promise<void> {
    const before = this.#spec;
    this.#spec = spec;
    if (JSON.stringify(before) === JSON.stringify(spec) || this.#state === 'stopped') return;
    await this.stop();
    this.start();
  }

  #setState(state: LspServerState): void {
    this.#state = state;
    this.#emit();
  }

  #emit(): void {
    this.ctx.onStatus(this.status());
  }

  status(): LspServerStatus {
    return {
      name: this.#spec.name,
      state: this.#state,
      command: [this.#spec.command, ...this.#spec.args].join(' '),
      source: this.#spec.source,
      extensions: Object.keys(this.#spec.languages),
      pid: this.#process?.pid ?? null,
      startedAt: this.#startedAt,
      restarts: this.#restarts.count,
      files: this.docs.size,
      lastDiagnosticsAt: this.#diagnostics.lastAt,
      lastError: this.#lastError,
      nextRestartAt: this.#restarts.nextAt,
      notes: this.#notes,
      ...(this.#mode ? { diagnostics: this.#mode } : {}),
      ...(this.#spec.sandbox ? { sandbox: 'bwrap' as const } : {}),
      logFile: this.#log.file,
    };
  }
}
