/** The caller aborted while waiting for a slot. */
import { whenAborted } from '../shared/abort.ts';
class NifflerAbort extends Error {
  override name = 'AbortError';
  constructor(message = 'the call was canceled') {
    super(message);
  }
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
  /** Stops listening to the waiter's signal. */
  offAbort?: () => void;
}

/** A FIFO semaphore: at most `limit` holders; waiters leave the queue when their signal aborts. */
export class Limiter {
  private active = 0;
  private readonly queue: Waiter[] = [];

  constructor(private limit: number) {}

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.queue.length;
  }

  setLimit(limit: number): void {
    this.limit = Math.max(1, limit);
    this.drain();
  }

  /** Takes a free slot at once when there is one and nobody queues; then call `release` once. */
  tryAcquire(): boolean {
    if (this.active >= this.limit || this.queue.length > 0) return false;
    this.active++;
    return true;
  }

  /** Resolves once a slot is held; call `release` exactly once afterwards. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new NifflerAbort());
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      this.queue.push(waiter);
      waiter.offAbort = whenAborted(signal, () => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        reject(new NifflerAbort());
      });
    });
  }

  release(): void {
    this.active--;
    this.drain();
  }

  /** Rejects every waiter (server stopped or crashed). */
  rejectAll(error: unknown): void {
    for (const waiter of this.queue.splice(0)) {
      waiter.offAbort?.();
      waiter.reject(error);
    }
  }

  private drain(): void {
    while (this.active < this.limit && this.queue.length > 0) {
      const waiter = this.queue.shift()!;
      waiter.offAbort?.();
      this.active++;
      waiter.resolve();
    }
  }
}
