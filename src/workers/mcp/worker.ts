import { parentPort, workerData } from 'node:worker_threads';
import type { McpWorkerData, McpWorkerInit } from '../protocol/mcp.ts';
import {
  enableCompileCache,
  flushCompileCache,
  type WorkerStart,
} from '../shared/compile-cache.ts';
import { spawnEarly } from './early-spawn.ts';
import { EarlyAnswers } from './early-answers.ts';
import { keptCatalogs } from './kept-catalog.ts';
import { prepareParentDeath } from '../shared/parent-death.ts';

// The MCP worker thread's entry. A cold start waits for the servers, so this loads as little as
// it can before they run: it turns the compile cache on, spawns the stdio servers as soon as it
// has its data (early-spawn.ts), and only then loads the MCP client code (the SDK, thread.ts)
// through the cache, while the servers boot. A daemon starts this thread before it reads its
// config: then the data comes as the first message (McpHost.start).
if (!parentPort) throw new Error('the MCP worker must run in a worker thread');
/** How long a deferred load of the client code waits for the first request at most (default). */
const DEFER_FALLBACK_MS = 3000;
const port = parentPort;
const start = workerData as WorkerStart<McpWorkerData>;
enableCompileCache(start.compileCache);

const init = new Promise<McpWorkerData>((resolve) => {
  if (start.data) return resolve(start.data);
  port.once('message', (message: McpWorkerInit) => resolve(message.data));
});
// While the data is on its way (a daemon reads its config meanwhile), what the spawns will need.
if (!start.data) prepareParentDeath();
const data = await init;
// The engine's first requests are answered from the servers' kept catalogs meanwhile.
const kept = keptCatalogs(data, (event) => port.postMessage(event));
const early = new EarlyAnswers(port, data, kept);
// A cold start for a prompt whose servers' tools are all kept, or all deferred behind tool search:
// the first request needs none of them, and three servers booting on a small machine slow
// everything it does need. They spawn, and the client code loads, once that request has gone.
// Otherwise they spawn now, before the client code loads: its loading (a few tens of ms) holds
// the thread, and so would the servers.
const deferred = data.deferClient === true && (early.allKept || data.toolsDeferred === true);
if (!deferred) spawnEarly(data);
early.listen();
if (deferred) {
  await early.released(data.deferFallbackMs ?? DEFER_FALLBACK_MS);
  spawnEarly(data);
}
const { McpWorkerThread } = await import('./thread.ts');
new McpWorkerThread(port, data, { kept, held: early.handOver() }).serve();
flushCompileCache();
