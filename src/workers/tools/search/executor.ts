import type { MessagePort } from 'node:worker_threads';
import { inlineExecutor } from './inline.ts';
import { portExecutor, portProgress } from './port-executor.ts';
import type { SearchExecutor, SearchIo } from './io.ts';

/**
 * Where a grep's or a glob's chunks run: on the pool's other threads when the task's owner offers
 * them (`searchThreads`, asked on the task's port), else one after another in this thread, the
 * owner watching its beat.
 */
/** What a search tool gets of its task (the tools worker's `ToolIo`). */
export interface SearchToolIo {
  signal: AbortSignal;
  port?: MessagePort;
  searchThreads?: number;
}

export const searchIo = (io: SearchToolIo): [SearchExecutor, SearchIo] =>
  io.port && io.searchThreads
    ? [
        withInline(portExecutor(io.port, io.searchThreads), io.port),
        { signal: io.signal, onProgress: portProgress(io.port) },
      ]
    : [
        inlineExecutor(io.port),
        { signal: io.signal, ...(io.port ? { onProgress: portProgress(io.port) } : {}) },
      ];

/** `executor` that may also run a chunk in this thread (watched by the owner on `port`). */
const withInline = (executor: SearchExecutor, port: MessagePort): SearchExecutor => {
  let own: SearchExecutor | undefined;
  return {
    ...executor,
    inline: (chunk, signal) => (own ??= inlineExecutor(port, true)).scan(chunk, signal),
  };
};
