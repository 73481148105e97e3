import type { MessagePort } from 'node:worker_threads';
import type { LspEvent, LspRequest, LspWorkerData } from '../protocol/lsp.ts';
import { toWire } from '../protocol/wire-error.ts';
import { LspManager } from './manager.ts';

/** A request from main that is answered by a result (or an error). */
type Answered = Exclude<LspRequest, { type: 'cancel' }>;

/**
 * The LSP worker thread's work: owns every language server; answers requests from main on
 * `port` and pushes their status changes to it.
 */
export class LspWorkerThread {
  readonly #manager: LspManager;

  constructor(
    private readonly port: MessagePort,
    data: LspWorkerData,
  ) {
    this.#manager = new LspManager(data, this.#post);
  }

  serve(): void {
    this.port.on('message', this.#receive);
    // If the thread is torn down without a shutdown request, no server process outlives it.
    process.on('exit', () => this.#manager.killAll());
    this.#post({ type: 'ready' });
  }

  readonly #post = (event: LspEvent): void => this.port.postMessage(event);

  readonly #receive = (request: LspRequest): void => {
    // Every request is bounded by its own deadline here: a cancel has nothing left to stop.
    if (request.type === 'cancel') return;
    this.#handle(request)
      .then(
        (value) => this.#post({ type: 'result', id: request.id, value }),
        (error: unknown) => this.#post({ type: 'error', id: request.id, error: toWire(error) }),
      )
      .finally(() => {
        if (request.type === 'shutdown') this.port.close();
      });
  };

  /** What each request does (a table: one line per request). */
  async #handle(request: Answered): Promise<unknown> {
    const manager = this.#manager;
    switch (request.type) {
      case 'status':
        return manager.status();
      case 'start':
        manager.start(request.servers);
        return {};
      case 'prepare':
        await manager.prepare(request.files);
        return {};
      case 'diagnose':
        return manager.diagnose(
          request.files,
          request.gone ?? [],
          request.deadline,
          request.warnings,
        );
      case 'query': {
        const { type: _type, id: _id, deadline, ...query } = request;
        return { text: await manager.query(query, deadline) };
      }
      case 'update-servers':
        await manager.updateServers(request.servers);
        return {};
      case 'shutdown':
        await manager.shutdown();
        return {};
    }
  }
}
