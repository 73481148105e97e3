import { startWorker, type BootedWorker } from '../threads/entry.ts';
import { mark } from '../../workers/shared/timeline.ts';

// A cold daemon's first step, before it loads its own code (daemon/body.ts): the worker threads a
// first request needs start now, each booting its isolate and loading its code on a core of its
// own while this thread loads the engine's and reads the config. The MCP worker waits for its
// data (McpHost.start); the API worker, started only for a prompt, for the model to warm.

const boot = (name: 'mcp' | 'api'): BootedWorker => {
  const worker = startWorker(name);
  const booted: BootedWorker = { worker, ready: false, exited: false };
  worker.once('exit', () => (booted.exited = true));
  if (name !== 'api') return booted;
  worker.once('message', (message: { type?: string }) => {
    if (message.type !== 'ready') return;
    booted.ready = true;
    mark('API worker ready');
  });
  // As ApiHost keeps it: referenced only while it streams.
  worker.unref();
  return booted;
};

/** The workers of a cold daemon: the MCP worker always, the API worker when a prompt comes. */
export const bootWorkers = (forPrompt: boolean): { mcp: BootedWorker; api?: BootedWorker } => ({
  mcp: boot('mcp'),
  ...(forPrompt ? { api: boot('api') } : {}),
});
