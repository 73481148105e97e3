import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { compileCacheDir, type WorkerStart } from '../../workers/shared/compile-cache.ts';

export type WorkerName = 'mcp' | 'api' | 'tools' | 'lsp';

const isSource = import.meta.url.endsWith('.ts');

/** A file of the build (`dist/<relative>`), from whichever bundle or chunk this code landed in. */
export const distFile = (relative: string): URL =>
  new URL(`${/\/chunks\/[^/]+$/.test(import.meta.url) ? '../' : './'}${relative}`, import.meta.url);

/** True when running from TypeScript sources (dev, tests), false in the build. */
export const isSourceRun = (): boolean => isSource;

/**
 * The file a worker thread runs: the bundle `dist/workers/<name>.js` in a build, the TypeScript
 * entry `src/workers/<name>/worker.ts` in dev and tests (run through tsx).
 */
export const workerFile = (name: WorkerName): URL =>
  isSource
    ? new URL(`../../workers/${name}/worker.ts`, import.meta.url)
    : distFile(`workers/${name}.js`);

/**
 * `execArgv` that lets a worker load TypeScript in dev and tests; nothing in a build. tsx is named
 * by its resolved path: as a bare `tsx` it would be looked up from the current directory, and a
 * run from source started elsewhere would fail to start its workers.
 */
export const workerExecArgv = (): string[] =>
  isSource ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : [];

const ASYNC_CONTEXT_FRAME = '--experimental-async-context-frame';

/**
 * Node 22's switch for `AsyncLocalStorage` on V8's continuation data (the default from Node 24,
 * where this flag is gone and nothing is added). Without it, the first `AsyncLocalStorage.run` in
 * a thread turns on async_hooks' promise hooks, and from then on every promise of that thread pays
 * for them: 2.5x the cost of an `await` here, and the garbage of the resources they track. The
 * MCP worker keeps one (call-scope.ts) around every tool call: 5–6 µs of its ~31 µs per call, a
 * sixth of its calls/s at concurrency 8. A Node option, not a V8 one: it leaves V8's flag hash,
 * and with it the embedded code cache, alone (see WORKER_YOUNG_GENERATION_MB).
 */
export const asyncContextFrame = (): string[] =>
  process.allowedNodeEnvironmentFlags.has(ASYNC_CONTEXT_FRAME) ? [ASYNC_CONTEXT_FRAME] : [];

const causes = new WeakMap<Worker, Error>();

/**
 * Why a worker ended, in words to follow its exit code: the error it threw (uncaught, or while
 * loading its code), or nothing when it exited on purpose.
 */
export const exitCause = (worker: Worker): string => {
  const error = causes.get(worker);
  return error ? `: ${error.message.split('\n')[0]}` : '';
};

/**
 * Each worker's young generation: 3 MiB (1 MiB semi-spaces; V8 grows them to 16 MiB by itself). A
 * daemon lives all day beside the user's editor, builds and models, and has three or four of these
 * isolates: this keeps several MiB per thread off its resident size for more frequent, shorter
 * scavenges. Set per worker (`resourceLimits`), not with a V8 flag: any heap flag changes V8's
 * flag hash, and every isolate then compiles Node's own modules anew instead of taking their
 * embedded code cache (+17 ms to start each thread, the daemon's main thread too).
 */
export const WORKER_YOUNG_GENERATION_MB = 3;

/** A worker started before its owner (daemon/early-workers.ts): what happened meanwhile. */
export interface BootedWorker {
  readonly worker: Worker;
  /** It posted `ready` before its owner listened (then the owner never sees that message). */
  ready: boolean;
  exited: boolean;
}

/**
 * Starts a worker thread from the one place that knows where worker files live. Its `workerData`
 * is a `WorkerStart`: `data` (if any) with this thread's compile cache directory.
 */
export const startWorker = <T>(
  name: WorkerName,
  data?: T,
  options: Omit<WorkerOptions, 'workerData'> = {},
): Worker => {
  const cache = compileCacheDir();
  const start: WorkerStart<T> = {
    ...(cache ? { compileCache: cache } : {}),
    ...(data !== undefined ? { data } : {}),
  };
  const worker = new Worker(workerFile(name), {
    ...options,
    resourceLimits: {
      maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
      ...options.resourceLimits,
    },
    workerData: start,
    execArgv: [...workerExecArgv(), ...asyncContextFrame(), ...(options.execArgv ?? [])],
  });
  worker.on('error', (error) => causes.set(worker, error));
  return worker;
};
