import { fromWire, NifflerError } from '../errors.ts';
import type { WireError } from '../../workers/protocol/wire-error.ts';

/** A channel's request/response pairs: `params` travel with `{ type, id }`, the reply is `result`. */
export type RpcCalls = Record<string, { params: object; result: unknown }>;

/** The replies `RpcChannel` consumes; every other message is the owner's. */
export type RpcReply =
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: WireError }
  | { type: 'progress'; id: number; progress: number; total?: number; message?: string };

export interface RpcProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface RpcRequestOptions {
  signal?: AbortSignal;
  /** Rejects with `timeout` after this long without a reply or progress; 0 for none. */
  timeoutMs?: number;
  onProgress?: (progress: RpcProgress) => void;
}

interface Pending {
  method: string;
  resolve: (value: never) => void;
  reject: (error: NifflerError) => void;
  onProgress?: (progress: RpcProgress) => void;
  timeoutMs: number;
  timer?: NodeJS.Timeout;
  cleanup: () => void;
}

const isReply = (message: { type: string }): message is RpcReply =>
  message.type === 'result' || message.type === 'error' || message.type === 'progress';

/**
 * Typed request/response over a `MessagePort` or `Worker`: ids from a counter, a timeout per
 * request (reset by progress), abort that posts `{ type: 'cancel', id }` and rejects at once,
 * and `rejectAll` for when the other side exits.
 */
export class RpcChannel<Calls extends RpcCalls> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly port: { postMessage(message: unknown): void },
    private readonly defaultTimeoutMs = 60_000,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  request<K extends keyof Calls & string>(
    method: K,
    params: Calls[K]['params'],
    options: RpcRequestOptions = {},
  ): Promise<Calls[K]['result']> {
    const { signal } = options;
    if (signal?.aborted)
      return Promise.reject(new NifflerError('canceled', `${method} was canceled`));
    const id = this.nextId++;
    return new Promise<Calls[K]['result']>((resolve, reject) => {
      const onAbort = () => {
        this.settle(id);
        this.port.postMessage({ type: 'cancel', id });
        reject(new NifflerError('canceled', `${method} was canceled`, { method }));
      };
      const entry: Pending = {
        method,
        resolve: resolve,
        reject,
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        timeoutMs: options.timeoutMs ?? this.defaultTimeoutMs,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      this.pending.set(id, entry);
      this.arm(id, entry);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.port.postMessage({ type: method, id, ...params });
    });
  }

  /** Consumes a reply; returns false for messages that are not replies (the owner's events). */
  handle(message: { type: string }): boolean {
    if (!isReply(message)) return false;
    const entry = this.pending.get(message.id);
    if (!entry) return true; // a reply to a request already canceled or timed out
    switch (message.type) {
      case 'progress': {
        this.arm(message.id, entry);
        const { progress, total, message: text } = message;
        entry.onProgress?.({
          progress,
          ...(total !== undefined ? { total } : {}),
          ...(text !== undefined ? { message: text } : {}),
        });
        return true;
      }
      case 'result':
        this.settle(message.id);
        entry.resolve(message.value as never);
        return true;
      case 'error':
        this.settle(message.id);
        entry.reject(fromWire(message.error));
        return true;
    }
  }

  /** Rejects every pending request (the worker exited). */
  rejectAll(error: NifflerError): void {
    for (const [id, entry] of [...this.pending]) {
      this.settle(id);
      entry.reject(error);
    }
  }

  private arm(id: number, entry: Pending): void {
    clearTimeout(entry.timer);
    if (entry.timeoutMs <= 0) return;
    entry.timer = setTimeout(() => {
      this.settle(id);
      this.port.postMessage({ type: 'cancel', id });
      entry.reject(
        new NifflerError('timeout', `${entry.method} got no reply within ${entry.timeoutMs} ms`, {
          method: entry.method,
        }),
      );
    }, entry.timeoutMs);
  }

  private settle(id: number): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    entry.cleanup();
    this.pending.delete(id);
  }
}
