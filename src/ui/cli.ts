#!/usr/bin/env node
import module from 'node:module';
import { VERSION } from '../main/version.ts';
import type * as Fast from './fast.ts';

// Node caches the compiled code of our bundles on disk (os.tmpdir()/node-compile-cache): every
// later start skips parsing and compiling them. Everything else below is imported dynamically,
// after this call, so it all benefits.
module.enableCompileCache?.();

// The bin entry: the command tree (commander and each command's module) loads only when needed,
// so `niffler --version` and the warm status path stay close to Node's own start-up.
// `niffler … | head` closes the pipe early: that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });

/**
 * The hot read-only listings, called by scripts and status lines many times a minute, skip the
 * command tree when their arguments are exactly these flags (anything else, `--help` included,
 * goes through commander as usual). They live in one module (see fast.ts).
 */
const fastRoute = (args: string[]): ((fast: typeof Fast) => Promise<void>) | undefined => {
  const [group, verb, ...flags] = args;
  const only = (allowed: string[]) => flags.every((f) => allowed.includes(f));
  const options = { json: flags.includes('--json'), wait: flags.includes('--wait') };
  if (group === 'mcp' && verb === 'status' && only(['--json', '--wait']))
    return (fast) => fast.mcpStatus(options);
  if (group === 'daemon' && verb === 'status' && only(['--json']))
    return (fast) => fast.daemonStatus(options);
  return undefined;
};

const main = async (argv: string[]): Promise<number> => {
  const args = argv.slice(2);
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // Plain `niffler` on a terminal — the most common start — skips the command tree entirely, so
  // the first frame of the session comes sooner.
  if (args.length === 0 && process.stdin.isTTY && process.stdout.isTTY) {
    const [{ interactive }, { reportError }] = await Promise.all([
      import('./commands/interactive.ts'),
      import('./render/output.ts'),
    ]);
    return interactive({}).then(
      () => (typeof process.exitCode === 'number' ? process.exitCode : 0),
      (error: unknown) => reportError(error),
    );
  }
  const route = fastRoute(args);
  if (route) {
    const fast = await import('./fast.ts');
    return route(fast).then(
      () => (typeof process.exitCode === 'number' ? process.exitCode : 0),
      (error: unknown) => fast.reportError(error),
    );
  }
  const [{ CommanderError }, { buildProgram }, { reportError }] = await Promise.all([
    import('commander'),
    import('./program.ts'),
    import('./render/output.ts'),
  ]);
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    return reportError(error);
  }
};

process.exitCode = await main(process.argv);
