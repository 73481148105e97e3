import module from 'node:module';
import path from 'node:path';

/**
 * What every niffler worker thread is started with (`workerData`): the directory of Node's
 * on-disk compile cache, when its starter uses one, and the worker's own data.
 *
 * A thread does not share its process's compile cache (`module.enableCompileCache` is per
 * thread), so each worker turns it on itself, in the same private directory
 * (`$NIFFLER_HOME/cache/compile`, never the shared temp directory: code read from it runs as the
 * user).
 */
export interface WorkerStart<T = undefined> {
  compileCache?: string;
  data?: T;
}

/**
 * The directory this thread's compile cache was turned on in, if it was: what its workers are
 * given. (Node answers with the subdirectory it keeps for this Node version and build.)
 */
export const compileCacheDir = (): string | undefined => {
  const dir = module.getCompileCacheDir?.();
  return dir ? path.dirname(dir) : undefined;
};

/**
 * Turns Node's compile cache on for this thread (modules loaded from now on, the dynamic imports
 * of code already loaded included). The cache only ever saves time: any failure is ignored.
 */
export const enableCompileCache = (dir: string | undefined): void => {
  if (!dir) return;
  try {
    module.enableCompileCache?.(dir);
  } catch {
    // An unusable directory: modules load as they would without it.
  }
};

/**
 * Writes what the thread compiled so far to the cache now, rather than when it ends: a worker
 * ended by its process's exit, and a daemon killed rather than stopped, never get to.
 */
export const flushCompileCache = (): void => {
  try {
    module.flushCompileCache?.();
  } catch {
    // As above.
  }
};
