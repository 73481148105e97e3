import type { MessagePort } from 'node:worker_threads';
import type { ScanChunk, WalkRequest } from '../../protocol/search.ts';
import type { ToolPortMessage } from '../../protocol/tools.ts';
import type { SearchExecutor } from './io.ts';
import { scanChunk } from './scan.ts';
import { walkFiles } from './walk-files.ts';

/**
 * A search's chunks run one after another in the calling thread: where no other thread of the
 * pool is offered (the pool is busy with other searches, or has one thread; the tool's tests).
 * A chunk cannot be interrupted while it runs: with a `port`, its owner watches the chunk's beat
 * and ends this thread when one file holds it too long (the search then fails, naming the file);
 * without one, the search's deadline stops it between files.
 */
export const inlineExecutor = (port?: MessagePort, now = false): SearchExecutor => {
  const beat = port ? new SharedArrayBuffer(12) : undefined;
  if (port && beat) port.postMessage({ type: 'beat', beat } satisfies ToolPortMessage);
  return {
    parallel: 1,
    scan: async (chunk: ScanChunk) => {
      // Let the listing's output and timers in between chunks (`now`: a first chunk, wanted at
      // once, goes before the rest of the listing).
      if (!now) await new Promise((resolve) => setImmediate(resolve));
      if (!port || !beat) return scanChunk(chunk);
      port.postMessage({ type: 'files', files: chunk.files } satisfies ToolPortMessage);
      Atomics.store(new Int32Array(beat), 1, 0);
      return scanChunk({ ...chunk, beat });
    },
    walk: async (request: WalkRequest) => walkFiles(request),
  };
};
