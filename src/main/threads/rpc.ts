import { fromWire, NifflerError } from '../errors.ts';
import type { WireError } from '../../workers/protocol/wire-error.ts';
import { whenAborted } from '../../workers/shared/abort.ts';

/** A channel's request/response pairs: `params` travel with `{ type, id }`, the reply is `result`. */
type RpcCalls = Record<string, { params: object; result: unknown }>;

/** The replies `RpcChannel` consumes; every other message is the owner's. */
type RpcReply =
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: WireError }
  | { type: 'progress'; id: number; progress: number; total?: number; message?: string };

export interface RpcProgress {
  progress: number;
  total?: number;
  message?: string;
}

interface RpcRequestOptions {
  signal?: AbortSignal;
  /** Rejects with `timeout` after this long without a reply or progress; 0 for none. */
  timeoutMs?: number;
  onProgress?: (progress: RpcProgress) => void;
}

interface RpcChannelOptions {
  /** Rejects a request with `timeout` after this long without a reply or progress; default 60 s. */
  defaultTimeoutMs?: number;
}

interface Pending {
  method: string;
  resolve: (value: never) => void;
  reject: (error: NifflerError) => void;
  onProgress: ((progress: RpcProgress) => void) | undefined;
  timeoutMs: number;
  timer: NodeJS.Timeout | undefined;
  /** Stops listening to the request's signal. */
  offAbort: (() => void) | undefined;
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
  private readonly defaultTimeoutMs: number;

  constructor(
    private readonly port: { postMessage(message: unknown): void },
    options: number | RpcChannelOptions = {},
  ) {
    const { defaultTimeoutMs = 60_000 } =
      typeof options === 'number' ? { defaultTimeoutMs: options } : options;
    this.defaultTimeoutMs = defaultTimeoutMs;
  }

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
      const entry: Pending = {
        method,
        resolve,
        reject,
        onProgress: options.onProgress,
        timeoutMs: options.timeoutMs ?? this.defaultTimeoutMs,
        timer: undefined,
        offAbort: undefined,
      };
      this.pending.set(id, entry);
      this.arm(id, entry);
      if (signal)
        entry.offAbort = whenAborted(signal, () => {
          this.settle(id);
          this.send({ type: 'cancel', id });
          reject(new NifflerError('canceled', `${method} was canceled`, { method }));
        });
      this.send({ type: method, id, ...params });
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

  // Each message leaves at once, never batched: batching (tried) makes concurrent calls travel in
  // convoys — all of them through main, then the worker, then the server — where posting each as
  // it comes lets the three work side by side (bench/mcp-call.bench.ts: 0.84–0.88x of the raw
  // SDK client's calls/s against 0.67–0.71x batched).
  private send(message: object): void {
    this.port.postMessage(message);
  }

  private arm(id: number, entry: Pending): void {
    if (entry.timer) clearTimeout(entry.timer);
    if (entry.timeoutMs <= 0) return;
    entry.timer = setTimeout(() => {
      this.settle(id);
      this.send({ type: 'cancel', id });
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
    if (entry.timer) clearTimeout(entry.timer);
    entry.offAbort?.();
    this.pending.delete(id);
  }
}
