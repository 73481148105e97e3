import type { MessagePort } from 'node:worker_threads';
import type {
  ScanChunk,
  ScanResult,
  SearchReply,
  WalkAnswer,
  WalkRequest,
} from '../../protocol/search.ts';
import type { ToolPortMessage } from '../../protocol/tools.ts';
import { whenAborted } from '../../shared/abort.ts';
import type { SearchExecutor, SearchProgress } from './io.ts';

/**
 * A search's chunks and walks asked of the task's owner on its port: the owner runs them on other
 * threads of the pool (`threads` at once), ends a thread stuck on one file and answers here.
 */
export const portExecutor = (port: MessagePort, threads: number): SearchExecutor => {
  let ids = 0;
  const waiting = new Map<number, { resolve: (v: never) => void; reject: (e: Error) => void }>();
  port.on('message', (reply: SearchReply | { type: string }) => {
    if (!('id' in reply)) return;
    const entry = waiting.get(reply.id);
    if (!entry) return;
    waiting.delete(reply.id);
    if (reply.type === 'failed') entry.reject(new Error(reply.message));
    else entry.resolve((reply.type === 'scanned' ? reply.result : reply.answer) as never);
  });
  const ask = <T>(message: ToolPortMessage & { id: number }, signal: AbortSignal): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const { id } = message;
      waiting.set(id, { resolve: resolve, reject });
      port.postMessage(message);
      whenAborted(signal, () => {
        if (!waiting.delete(id)) return;
        port.postMessage({ type: 'drop', id } satisfies ToolPortMessage);
        reject(new Error('dropped'));
      });
    });
  return {
    parallel: threads,
    scan: (chunk: ScanChunk, signal: AbortSignal) =>
      ask<ScanResult & { slow?: number[] }>({ type: 'scan', id: ++ids, chunk }, signal),
    walk: (request: WalkRequest, signal: AbortSignal) =>
      ask<WalkAnswer>({ type: 'walk', id: ++ids, request }, signal),
  };
};

/** Progress passed on to the owner. */
export const portProgress =
  (port: MessagePort) =>
  (progress: SearchProgress): void =>
    port.postMessage({ type: 'progress', ...progress } satisfies ToolPortMessage);
