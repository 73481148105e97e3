import { createRequire } from 'node:module';
import type * as Zod from 'zod';
import path from 'node:path';
import { provideRealZod, zodLoaded } from '../main/config/lazy-zod.ts';
import { ParseMemo } from '../main/config/parse-memo.ts';
import { cacheDir } from '../main/paths.ts';

// The commands that answer from the config alone (`mcp list`, `config show|path`, `trust --diff`,
// `agents`, `task list|show|history`) and help: one self-contained CommonJS file
// (dist/config.cjs), which the bin loads through a code cache (cli.ts), running the command tree as dist/main.js would, without loading
// what those commands do not use. Its modules' `zod` is lazy-zod.ts (the build points it there):
// the config's schemas are built, and zod loaded, only for a parse the memo does not hold.

/**
 * False when this run needed zod (a config not seen before): the bin then leaves the code cache
 * to a later run, which needs it not (see CodeCacheOptions.typicalRun).
 */
export const typicalRun = (): boolean => !zodLoaded();

type Flags = Record<string, boolean>;

/** The flags of `rest` as options, when they are all among `allowed`; undefined otherwise. */
const flagsOf = (rest: string[], allowed: string[]): Flags | undefined =>
  rest.every((arg) => allowed.includes(arg))
    ? Object.fromEntries(rest.map((arg) => [arg.slice(2), true]))
    : undefined;

/**
 * The config commands with exactly their own flags, run without the command tree (what
 * commander would call, with the options it would give); anything else — the root's options,
 * help, a typo — goes through the command tree, as in dist/main.js.
 */
const direct = (args: string[]): (() => Promise<void> | void) | undefined => {
  const [command, sub = '', ...rest] = args;
  const after = command === 'trust' || command === 'agents' ? [sub, ...rest].filter(Boolean) : rest;
  if (command === 'mcp' && sub === 'list') {
    const flags = flagsOf(after, ['--json']);
    return flags && (async () => (await import('./commands/mcp.ts')).mcpList(flags));
  }
  if (command === 'config' && (sub === 'show' || sub === 'path')) {
    const flags = flagsOf(after, sub === 'show' ? ['--json', '--origin'] : ['--json']);
    return (
      flags &&
      (async () => {
        const commands = await import('./commands/config.ts');
        return sub === 'show' ? commands.configShow(flags) : commands.configPath(flags);
      })
    );
  }
  if (command === 'trust') {
    const flags = flagsOf(after, ['--diff', '--json']);
    return flags?.['diff']
      ? async () => (await import('./commands/trust.ts')).trust(flags)
      : undefined;
  }
  if (command === 'task' && sub === 'list') {
    const flags = flagsOf(after, ['--json']);
    return flags && (async () => (await import('./commands/task-views.ts')).taskList(flags));
  }
  if (command === 'agents') {
    const flags = flagsOf(after, ['--json']);
    return flags && (async () => (await import('./commands/extensions.ts')).agents(flags));
  }
  return undefined;
};

/**
 * Runs `niffler ARGS` (a config command or help); resolves to the exit code. `build` names this
 * bundle's build (a digest): the memo of parses is kept per build.
 */
export const run = async (argv: string[], build = 'source'): Promise<number> => {
  const memo = new ParseMemo(path.join(cacheDir('parses'), `${build}.json`), build);
  provideRealZod(loadZod, memo);
  process.once('exit', () => memo.save());
  const command = direct(argv.slice(2));
  if (!command) return (await import('./main.ts')).run(argv);
  const [{ exitCode }, { reportError }] = await Promise.all([
    import('./exit-code.ts'),
    import('./render/output.ts'),
  ]);
  try {
    await command();
    return exitCode();
  } catch (error) {
    return reportError(error);
  }
};
/**
 * The real zod, loaded on first use: in the build from dist/zod.cjs, a bundle of its own (a third of
 * a megabyte this file would read at every start otherwise); from source, the package.
 */
const loadZod = (): typeof Zod.z =>
  (
    (import.meta.url.endsWith('.ts')
      ? createRequire(import.meta.url)('zod')
      : createRequire(import.meta.url)('./zod.cjs')) as typeof Zod
  ).z;
