import { parentPort, workerData } from 'node:worker_threads';
import type { McpWorkerData, McpWorkerInit } from '../protocol/mcp.ts';
import { enableCompileCache, flushCompileCache, type WorkerStart } from '../shared/compile-cache.ts';
import { spawnEarly } from './early-spawn.ts';

// The MCP worker thread's entry. A cold start waits for the servers, so this loads as little as
// it can before they run: it turns the compile cache on, spawns the stdio servers as soon as it
// has its data (early-spawn.ts), and meanwhile loads the MCP client code (the SDK, thread.ts)
// through the cache. A daemon starts this thread before it reads its config: then the data comes
// as the first message (McpHost.start) while the code loads.
if (!parentPort) throw new Error('the MCP worker must run in a worker thread');
const port = parentPort;
const start = workerData as WorkerStart<McpWorkerData>;
enableCompileCache(start.compileCache);

const init = new Promise<McpWorkerData>((resolve) => {
  if (start.data) return resolve(start.data);
  port.once('message', (message: McpWorkerInit) => resolve(message.data));
}).then((data) => {
  spawnEarly(data);
  return data;
});
const [{ McpWorkerThread }, data] = await Promise.all([import('./thread.ts'), init]);
new McpWorkerThread(port, data).serve();
flushCompileCache();
