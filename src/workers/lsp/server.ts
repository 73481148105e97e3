import path from 'node:path';
import {
  CancellationTokenSource,
  ConfigurationRequest,
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentDiagnosticRequest,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  LogMessageNotification,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type CancellationToken,
  type Diagnostic,
  type InitializeResult,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';
import type { LspServerSpec, LspServerState, LspServerStatus, LspTiming } from '../protocol/lsp.ts';
import { RotatingLog } from '../shared/rotating-log.ts';
import { formatBytes } from '../shared/bounded-read.ts';
import { DEFAULT_HEALTH, Restarts } from '../mcp/backoff.ts';
import { Documents, type OpenDocument } from './documents.ts';
import {
  byPosition,
  fromTsserver,
  MAX_FILE_DIAGNOSTICS,
  type TsserverDiagnostic,
} from './diagnostics.ts';
import { fromUri, isWorkspaceFile, readDocument, shown, type Place } from './files.ts';
import { initializeParams } from './initialize.ts';
import { ServerProcess } from './process.ts';

export const DEFAULT_TIMING: Required<LspTiming> = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  maxFailures: 5,
  failureWindowMs: 5 * 60_000,
  startupTimeoutMs: 60_000,
  hungAfterMs: 20_000,
  killGraceMs: 2_000,
  floodBytes: 64 * 1024 * 1024,
};

/** A server that sends more than `floodBytes` within this is ended (and restarted). */
const FLOOD_WINDOW_MS = 10_000;
/** Pushed diagnostics kept of files that are not open (for a workspace's diagnostics). */
const MAX_PUSHED_FILES = 500;
/** After a pushed answer, how long more of the same file's are waited for (servers send in parts). */
const PUSH_QUIET_MS = 100;
const MAX_NOTES = 5;
const TSSERVER_REQUEST = 'typescript.tsserverRequest';
/** Requests of a server answered with null: niffler registers nothing, shows nothing, refreshes nothing. */
const ACKNOWLEDGED = [
  'client/registerCapability',
  'client/unregisterCapability',
  'window/workDoneProgress/create',
  'window/showMessageRequest',
  'window/showDocument',
  'workspace/diagnostic/refresh',
  'workspace/semanticTokens/refresh',
  'workspace/inlayHint/refresh',
  'workspace/codeLens/refresh',
];

/** How a server's diagnostics are read: LSP's pull, tsserver's own request, or its pushes. */
export type DiagnosticsMode = 'pull' | 'tsserver' | 'push';

/** What a server needs of its worker. */
export interface ServerContext {
  place: Place;
  timing: Required<LspTiming>;
  logsDir: string;
  serversDir?: string;
  onStatus: (status: LspServerStatus) => void;
}

/** `undefined` after `ms`, unless `promise` settles first. */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | undefined> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, ms));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

/** What a server pushed for one file: when, for which version, what. */
interface Pushed {
  at: number;
  version?: number;
  items: Diagnostic[];
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
  #lastDiagnosticsAt: number | null = null;
  #lastHeard = 0;
  /** Requests the server has not answered yet (cancelled ones too), and since when. */
  #pending = 0;
  #pendingSince = 0;
  #stderrTail = '';
  #flood = { since: 0, bytes: 0 };
  #watch: NodeJS.Timeout | undefined;
  #warmFile: string | undefined;
  readonly #restarts: Restarts;
  readonly #readyWaiters = new Set<(ok: boolean) => void>();
  readonly #pushWaiters = new Set<(file: string) => void>();
  readonly #pushed = new Map<string, Pushed>();
  readonly #log: RotatingLog;

  constructor(
    spec: LspServerSpec,
    private readonly ctx: ServerContext,
  ) {
    this.#spec = spec;
    this.#restarts = new Restarts({ ...DEFAULT_HEALTH, ...ctx.timing });
    this.#log = new RotatingLog(
      path.join(ctx.logsDir, `${spec.name.replace(/[^\w.-]/g, '_')}.log`),
      1024 * 1024,
    );
    this.docs = new Documents({
      open: (doc) =>
        void this.#conn?.sendNotification(DidOpenTextDocumentNotification.type, {
          textDocument: {
            uri: doc.uri,
            languageId: doc.languageId,
            version: doc.version,
            text: doc.text,
          },
        }),
      change: (doc) =>
        void this.#conn?.sendNotification(DidChangeTextDocumentNotification.type, {
          textDocument: { uri: doc.uri, version: doc.version },
          contentChanges: [{ text: doc.text }],
        }),
      close: (doc) =>
        void this.#conn?.sendNotification(DidCloseTextDocumentNotification.type, {
          textDocument: { uri: doc.uri },
        }),
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
        onStderr: (text) => {
          this.#stderrTail = (this.#stderrTail + text).slice(-2048);
          this.#log.append(stamp('stderr', text));
        },
        onExit: (exit) => {
          if (generation !== this.#generation || this.#stopping) return;
          this.#fail(
            `exited${exit.signal ? ` on ${exit.signal}` : ` with code ${exit.code}`}${this.#stderrHint()}`,
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
    const stdout = proc.child.stdout!;
    stdout.on('data', (chunk: Buffer) => this.#heard(chunk.length, generation));
    const conn = createProtocolConnection(
      new StreamMessageReader(stdout),
      new StreamMessageWriter(proc.child.stdin!),
    );
    conn.onNotification(PublishDiagnosticsNotification.type, (params) => this.#pushedNow(params));
    conn.onNotification(LogMessageNotification.type, (params) =>
      this.#log.append(stamp('log', params.message)),
    );
    conn.onRequest(ConfigurationRequest.type, (params) => params.items.map(() => null));
    conn.onRequest('workspace/workspaceFolders', () => [
      {
        uri: initializeParams(this.#spec, this.ctx.place.root).rootUri,
        name: path.basename(this.ctx.place.root),
      },
    ]);
    // Registrations, progress tokens, refreshes, message boxes: acknowledged, nothing more.
    for (const method of ACKNOWLEDGED) conn.onRequest(method, () => null);
    conn.onRequest('workspace/applyEdit', () => ({
      applied: false,
      failureReason: 'niffler applies no edits of a language server',
    }));
    conn.onError(() => undefined);
    conn.listen();
    this.#conn = conn;
    return conn;
  }

  /** A chunk came from the server: it is alive; a flood ends it. */
  #heard(bytes: number, generation: number): void {
    if (generation !== this.#generation) return;
    const now = Date.now();
    this.#lastHeard = now;
    if (now - this.#flood.since > FLOOD_WINDOW_MS) this.#flood = { since: now, bytes: 0 };
    this.#flood.bytes += bytes;
    const { floodBytes } = this.ctx.timing;
    if (this.#flood.bytes > floodBytes) {
      this.#flood = { since: now, bytes: 0 };
      this.#fail(
        `sent more than ${formatBytes(floodBytes)} within ${FLOOD_WINDOW_MS / 1000} s (a flood); ended`,
      );
      return;
    }
    if (this.#state === 'degraded') this.#setState('ready');
  }

  #pushedNow(params: PublishDiagnosticsParams): void {
    const file = fromUri(params.uri);
    if (!file || !isWorkspaceFile(file, this.ctx.place)) {
      this.note(`said something of ${params.uri.slice(0, 120)}, outside the workspace: left out`);
      return;
    }
    const items = params.diagnostics.slice(0, MAX_FILE_DIAGNOSTICS);
    const pushed: Pushed = {
      at: Date.now(),
      items,
      ...(params.version !== undefined && params.version !== null
        ? { version: params.version }
        : {}),
    };
    this.#pushed.delete(file);
    this.#pushed.set(file, pushed);
    if (this.#pushed.size > MAX_PUSHED_FILES)
      this.#pushed.delete(this.#pushed.keys().next().value!);
    this.#lastDiagnosticsAt = pushed.at;
    for (const wake of [...this.#pushWaiters]) wake(file);
  }

  /** The diagnostics of the workspace's files it has said something of (pushed), by file. */
  pushedFiles(): Map<string, Diagnostic[]> {
    return new Map([...this.#pushed].map(([file, p]) => [file, p.items]));
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
    this.#track(sent);
    try {
      const answer = await within(
        sent.catch(() => undefined),
        deadline - since,
      );
      if (answer === undefined && Date.now() >= deadline) {
        source.cancel();
        if (this.#lastHeard < since)
          this.#degrade(
            `said nothing for ${((Date.now() - since) / 1000).toFixed(1)} s after ${what} (stopped or stuck?)`,
          );
      }
      return answer;
    } finally {
      source.dispose();
    }
  }

  /** Counts a request until the server answers it (or the connection goes). */
  #track(request: Promise<unknown>): void {
    const generation = this.#generation;
    if (this.#pending++ === 0) this.#pendingSince = Date.now();
    void request
      .catch(() => undefined)
      .finally(() => {
        if (generation === this.#generation) this.#pending--;
      });
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
    if (this.#mode !== 'push') return this.diagnosticsOf(doc, deadline);
    if (doc.diagnostics?.version === doc.version) return Promise.resolve(doc.diagnostics.items);
    const pushed = this.#pushed.get(doc.file);
    const current =
      pushed && pushed.at >= doc.syncedAt && (pushed.version ?? doc.version) === doc.version;
    return Promise.resolve(current ? pushed.items : undefined);
  }

  /** SIGKILL to its process group now (the thread is ending without a shutdown). */
  kill(): void {
    this.#generation++;
    this.#process?.kill();
  }

  /** The diagnostics of `doc` as it now stands, asked for or waited for until `deadline`. */
  async diagnosticsOf(doc: OpenDocument, deadline: number): Promise<Diagnostic[] | undefined> {
    const version = doc.version;
    if (doc.diagnostics?.version === version) return doc.diagnostics.items;
    const since = Date.now();
    const items =
      this.#mode === 'push'
        ? await this.#waitPush(doc, since, deadline)
        : await this.ask(
            (conn, token) => this.#pull(conn, doc, token),
            deadline,
            `a change to ${shown(doc.file, this.ctx.place)}`,
          );
    if (!items) return undefined;
    const sorted = items.slice(0, MAX_FILE_DIAGNOSTICS).sort(byPosition);
    if (doc.version === version) doc.diagnostics = { version, items: sorted, at: Date.now() };
    this.#lastDiagnosticsAt = Date.now();
    return sorted;
  }

  async #pull(
    conn: ProtocolConnection,
    doc: OpenDocument,
    token: CancellationToken,
  ): Promise<Diagnostic[]> {
    if (this.#mode === 'pull') {
      const report = await conn.sendRequest(
        DocumentDiagnosticRequest.type,
        { textDocument: { uri: doc.uri } },
        token,
      );
      return report.kind === 'full' ? report.items : (doc.diagnostics?.items ?? []);
    }
    const ask = async (command: string) => {
      const reply = (await conn.sendRequest(
        ExecuteCommandRequest.type,
        { command: TSSERVER_REQUEST, arguments: [command, { file: doc.uri }] },
        token,
      )) as { body?: TsserverDiagnostic[] } | null;
      return (reply?.body ?? []).map(fromTsserver);
    };
    const [syntax, semantic] = await Promise.all([
      ask('syntacticDiagnosticsSync'),
      ask('semanticDiagnosticsSync'),
    ]);
    return [...syntax, ...semantic];
  }

  /**
   * A pushing server's next diagnostics of `doc` after `since` (of its version, when it says
   * versions), and whatever more it sends of the same file right after.
   */
  #waitPush(doc: OpenDocument, since: number, deadline: number): Promise<Diagnostic[] | undefined> {
    const fresh = () => {
      const pushed = this.#pushed.get(doc.file);
      if (!pushed || pushed.at < since) return undefined;
      return pushed.version === undefined || pushed.version >= doc.version ? pushed : undefined;
    };
    return new Promise((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      const finish = (items: Diagnostic[] | undefined) => {
        clearTimeout(quiet);
        clearTimeout(timer);
        this.#pushWaiters.delete(onPush);
        // Silence after a change can be an answer (nothing new): the probe tells.
        if (!items && this.#lastHeard < since) this.#probe();
        resolve(items);
      };
      const onPush = (file: string) => {
        if (file !== doc.file || !fresh()) return;
        clearTimeout(quiet);
        quiet = setTimeout(
          () => finish(fresh()?.items),
          Math.min(PUSH_QUIET_MS, Math.max(0, deadline - Date.now())),
        );
      };
      const timer = setTimeout(() => finish(fresh()?.items), Math.max(0, deadline - Date.now()));
      this.#pushWaiters.add(onPush);
      onPush(doc.file);
    });
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
    const { hungAfterMs } = this.ctx.timing;
    const silent = Date.now() - Math.max(this.#lastHeard, this.#pendingSince);
    if (this.#pending > 0 && silent > hungAfterMs)
      this.#fail(`answered nothing for ${hungAfterMs / 1000} s while asked (hung); ended`);
  }

  /** The server failed: its process group ended, a restart scheduled with backoff (or given up). */
  #fail(message: string): void {
    this.#generation++;
    this.#pending = 0;
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
    this.#pushed.clear();
  }

  /** Stops it: `shutdown` and `exit` asked for, then its process group ended. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#generation++;
    this.#pending = 0;
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
    this.#pushed.clear();
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

  /** The last line the server wrote on stderr, and where the rest is. */
  #stderrHint(): string {
    const last = this.#stderrTail.trim().split('\n').at(-1)?.trim();
    this.#stderrTail = '';
    return `${last ? `: ${last.slice(0, 200)}` : ''} (its log: ${this.#log.file})`;
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
      lastDiagnosticsAt: this.#lastDiagnosticsAt,
      lastError: this.#lastError,
      nextRestartAt: this.#restarts.nextAt,
      notes: this.#notes,
      ...(this.#mode ? { diagnostics: this.#mode } : {}),
      ...(this.#spec.sandbox ? { sandbox: 'bwrap' as const } : {}),
      logFile: this.#log.file,
    };
  }
}

/** How diagnostics are read, from what the server said it can do. */
const modeOf = (init: InitializeResult): DiagnosticsMode => {
  if (init.capabilities.diagnosticProvider) return 'pull';
  const commands = init.capabilities.executeCommandProvider?.commands ?? [];
  return commands.includes(TSSERVER_REQUEST) ? 'tsserver' : 'push';
};

/** Lines for a server's log, each with time and where it came from. */
const stamp = (source: string, text: string): string => {
  const time = new Date().toISOString();
  return text
    .replace(/\r?\n$/, '')
    .split(/\r?\n/)
    .map((line) => `${time} [${source}] ${line}\n`)
    .join('');
};
