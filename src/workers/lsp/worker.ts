import { parentPort, workerData } from 'node:worker_threads';
import type { LspWorkerData } from '../protocol/lsp.ts';
import {
  enableCompileCache,
  flushCompileCache,
  type WorkerStart,
} from '../shared/compile-cache.ts';

// The LSP worker thread's entry: every language server's connection lives here, off the engine's
// thread, so that a server flooding it with diagnostics (or a 10 MB message to parse) never holds
// up a turn, a front-end or the MCP servers (see bench/lsp.bench.ts for what it saves).
if (!parentPort) throw new Error('the LSP worker must run in a worker thread');
const start = workerData as WorkerStart<LspWorkerData>;
enableCompileCache(start.compileCache);
const { LspWorkerThread } = await import('./thread.ts');
new LspWorkerThread(parentPort, start.data!).serve();
flushCompileCache();
