import type { Worker } from 'node:worker_threads';
import { NifflerError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type {
  LspCalls,
  LspEvent,
  LspFileOutcome,
  LspQuery,
  LspServerSpec,
  LspServerStatus,
  LspWorkerData,
} from '../../workers/protocol/lsp.ts';
import { killGroup } from '../../workers/shared/process-group.ts';
import { exitCause, startWorker } from './entry.ts';
import { RpcChannel } from './rpc.ts';

interface LspHostOptions {
  logger?: Logger;
  /** Respawn the worker when it dies (at most 3 times in 5 minutes); default true. */
  respawn?: boolean;
}

const RESPAWNS = 3;
const RESPAWN_WINDOW_MS = 5 * 60_000;

/**
 * Owns the LSP worker thread: typed requests, the servers' statuses as they change, a respawn
 * when the thread dies (the servers it had asked to start are started again), and `close()`
 * that leaves no server process behind. Every request carries its deadline; the host gives up
 * on an answer a little after it, whatever the worker is doing.
 */
export class LspHost {
  #worker!: Worker;
  #rpc!: RpcChannel<LspCalls>;
  readonly #statuses = new Map<string, LspServerStatus>();
  readonly #pids = new Map<string, number>();
  readonly #listeners = new Set<(status: LspServerStatus) => void>();
  #started: LspCalls['start']['params']['servers'] = [];
  #respawns: number[] = [];
  #closing: Promise<void> | undefined;
  readonly #onProcessExit = () => this.#killServers();

  private constructor(
    private data: LspWorkerData,
    private readonly options: LspHostOptions,
  ) {}

  static async start(data: LspWorkerData, options: LspHostOptions = {}): Promise<LspHost> {
    const host = new LspHost(data, options);
    await host.#spawn();
    process.on('exit', host.#onProcessExit);
    return host;
  }

  /** Subscribes to status changes; returns the unsubscribe function. */
  on(listener: (status: LspServerStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Statuses as last heard, without asking the worker. */
  knownStatuses(): LspServerStatus[] {
    return [...this.#statuses.values()];
  }

  status(): Promise<LspServerStatus[]> {
    return this.#rpc.request('status', {}, { timeoutMs: 5_000 });
  }

  /** Starts these servers in the background (each opening its warm-up file once it runs). */
  async start(servers: LspCalls['start']['params']['servers']): Promise<void> {
    const names = new Set(servers.map((s) => s.name));
    this.#started = [...this.#started.filter((s) => !names.has(s.name)), ...servers];
    await this.#rpc.request('start', { servers }, { timeoutMs: 5_000 });
  }

  /** Before a change: the files' current text to their servers (bounded by `timeoutMs`). */
  prepare(files: string[], timeoutMs: number): Promise<object> {
    return this.#rpc.request('prepare', { files }, { timeoutMs });
  }

  /** After a change: the files' diagnostics, by `deadline` (epoch ms) and `graceMs` more at most. */
  diagnose(params: LspCalls['diagnose']['params'], graceMs: number): Promise<LspFileOutcome[]> {
    return this.#rpc.request('diagnose', params, {
      timeoutMs: Math.max(1, params.deadline - Date.now()) + graceMs,
    });
  }

  /** The `lsp` tool's question, by `deadline` (and `graceMs` more at most). */
  async query(query: LspQuery, deadline: number, graceMs: number): Promise<string> {
    const timeoutMs = Math.max(1, deadline - Date.now()) + graceMs;
    return (await this.#rpc.request('query', { ...query, deadline }, { timeoutMs })).text;
  }

  /** Config reload: servers whose definition changed restart, removed ones stop. */
  async updateServers(servers: LspServerSpec[]): Promise<void> {
    this.data = { ...this.data, servers };
    const names = new Set(servers.map((s) => s.name));
    for (const name of this.#statuses.keys()) if (!names.has(name)) this.#statuses.delete(name);
    this.#started = this.#started.filter((s) => names.has(s.name));
    await this.#rpc.request('update-servers', { servers }, { timeoutMs: 30_000 });
  }

  /** Stops every server (process groups ended) and the worker. Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    try {
      await this.#rpc.request('shutdown', {}, { timeoutMs: 10_000 });
      const timer = setTimeout(() => void this.#worker.terminate(), 3_000);
      await exited;
      clearTimeout(timer);
    } catch {
      await this.#worker.terminate();
    }
    this.#killServers();
    process.off('exit', this.#onProcessExit);
  }

  #spawn(): Promise<void> {
    const worker = startWorker('lsp', this.data);
    this.#worker = worker;
    this.#rpc = new RpcChannel<LspCalls>(worker, { defaultTimeoutMs: 30_000 });
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on('message', (event: LspEvent) => {
        if (event.type === 'ready') {
          ready = true;
          return resolve();
        }
        this.#receive(event);
      });
      worker.on('error', (error) =>
        this.options.logger?.error('lsp worker error', {
          error: error.message,
          stack: error.stack,
        }),
      );
      worker.once('exit', (code) => {
        const error = new NifflerError(
          'worker-exited',
          `the LSP worker exited with code ${code}${exitCause(worker)}`,
          { code },
        );
        this.#rpc.rejectAll(error);
        if (!ready) return reject(error);
        if (this.#closing) return;
        this.#killServers();
        this.#afterCrash(error);
      });
    });
  }

  /** A worker that died is started again (not forever), and its servers with it. */
  #afterCrash(error: NifflerError): void {
    const now = Date.now();
    this.#respawns = [...this.#respawns.filter((at) => now - at < RESPAWN_WINDOW_MS), now];
    const again = this.options.respawn !== false && this.#respawns.length <= RESPAWNS;
    this.options.logger?.error('lsp worker exited', { error: error.message, respawning: again });
    for (const status of this.#statuses.values())
      this.#update({
        ...status,
        state: 'failed',
        pid: null,
        lastError: { message: `${error.message}${again ? '; starting it again' : ''}`, at: now },
      });
    if (!again) return;
    this.#spawn()
      .then(() => (this.#started.length ? this.start(this.#started) : undefined))
      .catch((e: unknown) =>
        this.options.logger?.error('lsp worker respawn failed', { error: String(e) }),
      );
  }

  #receive(event: LspEvent): void {
    if (this.#rpc.handle(event)) return;
    if (event.type === 'status') this.#update(event.status);
    else if (event.type === 'log')
      this.options.logger?.[event.level](event.msg, { scope: 'lsp', ...event.data });
  }

  #update(status: LspServerStatus): void {
    this.#statuses.set(status.name, status);
    if (status.pid !== null) this.#pids.set(status.name, status.pid);
    else this.#pids.delete(status.name);
    for (const listener of [...this.#listeners]) listener(status);
  }

  /** Ends the process groups of servers the worker reported (a worker that died or hung). */
  #killServers(): void {
    for (const pid of this.#pids.values()) killGroup(pid, 'SIGKILL');
    this.#pids.clear();
  }
}
