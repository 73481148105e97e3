// Everything the launcher (cli.ts) does not answer itself: the interactive session and the command
// tree. An ES module of the main build (dist/main.js), loaded by one dynamic import.
import { exitCode } from './exit-code.ts';
import { mark } from '../workers/shared/timeline.ts';

/** Runs `niffler ARGS` (without node and script); resolves to the exit code. */
export const run = async (argv: string[]): Promise<number> => {
  const args = argv.slice(2);
  // Plain `niffler` on a terminal — the most common start — skips the command tree entirely, so
  // the first frame of the session comes sooner.
  if (args.length === 0 && process.stdin.isTTY && process.stdout.isTTY) {
    mark('front-end main loaded');
    const [{ interactive }, { reportError }] = await Promise.all([
      import('./commands/interactive.ts'),
      import('./render/output.ts'),
    ]);
    return interactive({}).then(exitCode, (error: unknown) => reportError(error));
  }
  const [{ CommanderError }, { buildProgram }, { reportError }] = await Promise.all([
    import('commander'),
    import('./program.ts'),
    import('./render/output.ts'),
  ]);
  try {
    await buildProgram().parseAsync(argv);
    return exitCode();
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    return reportError(error);
  }
};
