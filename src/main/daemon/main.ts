import { fileURLToPath } from 'node:url';
import { cacheDir, homeProblem } from '../paths.ts';
import { distFile, isSourceRun } from '../threads/entry.ts';
import { mark } from '../../workers/shared/timeline.ts';
import type * as Body from './body.ts';

mark('daemon process started', true);

// The daemon process entry (dist/daemon.cjs): `node dist/daemon.cjs --root DIR`. Started detached
// by a front-end; says `ready` on stdout (when it is a pipe) once its socket accepts connections,
// or `busy PID` when another daemon runs for the workspace (then it exits at once).
//
// In a build, the rest is one CommonJS bundle (dist/daemon-body.cjs) loaded through a V8 code cache
// written once the daemon is warm (code-cache.ts): Node's ES module loader, resolving and linking a
// few dozen chunks and building the namespaces of `node:` modules (node:crypto's loads WebCrypto),
// and compiling again on every start each function a start calls (Node's compile cache keeps code
// as compiled before it runs), held the main thread on a cold start's critical path while the
// servers booted on the same cores: kill -9 recovery to a served `mcp status` went 548 -> 355 ms
// (median, 11 interleaved rounds; bench/daemon-recovery.bench.ts).

/** Set by the build: the digest of dist/daemon-body.cjs, part of its code cache's key. */
declare const __NIFFLER_DAEMON_BUILD__: string | undefined;

/** The body: its module in dev and tests (through tsx), the bundle through a code cache in a build. */
const loadBody = async (): Promise<{ body: typeof Body; saveCodeCache?: () => void }> => {
  // (node:worker_threads, which threads/entry.ts loads, the body needs at once anyway.)
  if (isSourceRun()) return { body: await import('./body.ts') };
  const { loadWithCodeCache } = await import('../code-cache.ts');
  const { exports, saveCache } = loadWithCodeCache<typeof Body>(
    fileURLToPath(distFile('daemon-body.cjs')),
    cacheDir('code'),
    typeof __NIFFLER_DAEMON_BUILD__ === 'string' ? __NIFFLER_DAEMON_BUILD__ : '',
  );
  return { body: exports, saveCodeCache: saveCache };
};

const start = async (): Promise<void> => {
  // MALLOC_ARENA_MAX was read by the allocator as the process started; set by the front-end for
  // the daemon alone (see daemonEnv in spawn.ts), it is not passed on to tools and servers.
  if (process.env['NIFFLER_DAEMON_ARENA'] === '1') {
    delete process.env['MALLOC_ARENA_MAX'];
    delete process.env['NIFFLER_DAEMON_ARENA'];
  }
  const rootIndex = process.argv.indexOf('--root');
  const root = rootIndex > 0 ? process.argv[rootIndex + 1] : undefined;
  if (!root) {
    process.stderr.write('usage: daemon.cjs --root DIR\n');
    process.exit(2);
  }
  const problem = homeProblem();
  if (problem) {
    process.stderr.write(`niffler daemon: ${problem}\n`);
    process.exit(1);
  }
  const { body, saveCodeCache } = await loadBody();
  await body.runDaemonProcess({
    root,
    forPrompt: process.argv.includes('--for-prompt'),
    ...(saveCodeCache ? { saveCodeCache } : {}),
  });
};

start().catch((error: unknown) => {
  // Only a broken install gets here (the bundle missing or unreadable).
  process.stderr.write(`niffler daemon failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
