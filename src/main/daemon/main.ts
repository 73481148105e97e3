import path from 'node:path';
import { enableCompileCache, flushCompileCache } from '../../workers/shared/compile-cache.ts';
import { homeProblem, nifflerHome } from '../paths.ts';
import { mark } from '../../workers/shared/timeline.ts';

mark('daemon process started', true);

// The daemon process entry (dist/daemon.js): `node dist/daemon.js --root DIR`. Started detached by
// a front-end; says `ready` on stdout (when it is a pipe) once its socket accepts connections, or
// `busy PID` when another daemon runs for the workspace (then it exits at once).
// MALLOC_ARENA_MAX was read by the allocator as the process started; set by the front-end for
// the daemon alone (see daemonEnv in lifecycle.ts), it is not passed on to tools and servers.
if (process.env['NIFFLER_DAEMON_ARENA'] === '1') {
  delete process.env['MALLOC_ARENA_MAX'];
  delete process.env['NIFFLER_DAEMON_ARENA'];
}
const rootIndex = process.argv.indexOf('--root');
const root = rootIndex > 0 ? process.argv[rootIndex + 1] : undefined;
if (!root) {
  process.stderr.write('usage: daemon.js --root DIR\n');
  process.exit(2);
}
const problem = homeProblem();
if (problem) {
  process.stderr.write(`niffler daemon: ${problem}\n`);
  process.exit(1);
}
// The rest of the daemon (and its workers, given the same directory) loads through Node's compile
// cache, in $NIFFLER_HOME like the front-end's: a cold start parses and compiles less.
enableCompileCache(path.join(nifflerHome(), 'cache', 'compile'));
const forPrompt = process.argv.includes('--for-prompt');
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
      if (!process.stdout.isTTY) process.stdout.write('ready\n');
      flushCompileCache();
    },
    onBusy: (holder) => {
      if (!process.stdout.isTTY) process.stdout.write(`busy ${holder ?? '?'}\n`);
    },
  });
  process.exit(0);
} catch (error) {
  process.stderr.write(`niffler daemon failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
