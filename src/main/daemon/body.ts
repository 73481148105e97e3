import path from 'node:path';
import { enableCompileCache, flushCompileCache } from '../../workers/shared/compile-cache.ts';
import { cacheDir } from '../paths.ts';
import { mark } from '../../workers/shared/timeline.ts';

// The daemon's main thread, after its entry (main.ts) has checked its arguments: one CommonJS
// bundle in a build (dist/daemon-body.cjs), which the entry loads through a code cache.

/** What the entry tells the body. */
export interface DaemonProcess {
  root: string;
  /** Started for a prompt (`--for-prompt`). */
  forPrompt: boolean;
  /** Writes the code cache of this bundle, when it was missing (see code-cache.ts). */
  saveCodeCache?: () => void;
}

/** Runs the daemon for `root` to its end, then exits the process (1 when it failed). */
export const runDaemonProcess = async ({ root, forPrompt, saveCodeCache }: DaemonProcess) => {
  // The workers load their ES modules through Node's compile cache, in $NIFFLER_HOME like the
  // front-end's: a thread gets the directory its starter enabled (see compile-cache.ts).
  enableCompileCache(cacheDir('compile'));
  let served = false;
  try {
    // The workers boot on the other core while this thread loads the daemon's code.
    const booted = (await import('./early-workers.ts')).bootWorkers(forPrompt);
    const { runDaemon } = await import('./server.ts');
    mark('daemon code loaded');
    await runDaemon({
      root: path.resolve(root),
      startedAt: Math.round(performance.timeOrigin),
      promptSoon: forPrompt,
      booted,
      onListening: () => {
        served = true;
        if (!process.stdout.isTTY) process.stdout.write('ready\n');
        flushCompileCache();
      },
      // Warm, the bundle has compiled what a start and a first request need: what the cache keeps
      // (or at a stop that came first: a daemon stopped as soon as asked never warms).
      onWarmed: () => saveCodeCache?.(),
      onBusy: (holder) => {
        if (!process.stdout.isTTY) process.stdout.write(`busy ${holder ?? '?'}\n`);
      },
    });
    // Not from a daemon that found another one running: it compiled next to nothing.
    if (served) saveCodeCache?.();
    process.exit(0);
  } catch (error) {
    process.stderr.write(`niffler daemon failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  }
};
