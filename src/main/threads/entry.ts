import { Worker, type WorkerOptions } from 'node:worker_threads';

export type WorkerName = 'mcp' | 'api' | 'tools';

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

/** `execArgv` that lets a worker load TypeScript in dev and tests; nothing in a build. */
export const workerExecArgv = (): string[] => (isSource ? ['--import', 'tsx'] : []);

/** Starts a worker thread from the one place that knows where worker files live. */
export const startWorker = (name: WorkerName, options: WorkerOptions = {}): Worker =>
  new Worker(workerFile(name), {
    ...options,
    execArgv: [...workerExecArgv(), ...(options.execArgv ?? [])],
  });
