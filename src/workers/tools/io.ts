import type { MessagePort } from 'node:worker_threads';

/** What a running tool gets besides its arguments: the task's cancel signal and owner port. */
export interface ToolIo {
  signal: AbortSignal;
  port?: MessagePort;
  /** grep and glob: the owner runs their chunks on this many threads (asked on `port`). */
  searchThreads?: number;
}
