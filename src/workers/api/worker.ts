import { parentPort, workerData } from 'node:worker_threads';
import type { ApiEvent, ApiRequest } from '../protocol/api.ts';
import {
  enableCompileCache,
  flushCompileCache,
  type WorkerStart,
} from '../shared/compile-cache.ts';
import type { WorkerLog } from './providers/provider.ts';
import { canceled, loadProvider, runStream } from './run.ts';
import { warmStream } from './warm.ts';
import { collectGarbage } from '../shared/gc.ts';
import { mark } from '../shared/timeline.ts';

if (!parentPort) throw new Error('the API worker must run in a worker thread');
// The providers' client libraries are loaded on demand: through the cache from here on.
enableCompileCache((workerData as WorkerStart | null)?.compileCache);
const port = parentPort;
const post = (event: ApiEvent) => port.postMessage(event);
const log: WorkerLog = (level, msg, data) =>
  post({ type: 'log', level, msg: `api: ${msg}`, ...(data ? { data } : {}) });
const active = new Map<number, AbortController>();

port.on('message', (message: ApiRequest) => {
  switch (message.type) {
    case 'stream': {
      mark('request sent to the API worker');
      post({ type: 'taken', id: message.id });
      const controller = new AbortController();
      active.set(message.id, controller);
      void runStream(
        message.request,
        controller.signal,
        (event) => post({ type: 'event', id: message.id, event }),
        log,
      ).finally(() => active.delete(message.id));
      break;
    }
    case 'cancel':
      active.get(message.id)?.abort(canceled());
      break;
    case 'collect-garbage':
      if (active.size === 0) collectGarbage(message.always);
      break;
    case 'warm':
      loadProvider(message.model.provider)
        .then(() => warmStream(message.model, log))
        .then(flushCompileCache, (error: unknown) =>
          log('warn', 'could not load a provider ahead of use', { error: String(error) }),
        );
      break;
    default:
      message satisfies never;
  }
});

post({ type: 'ready' });
