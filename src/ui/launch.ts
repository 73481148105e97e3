import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';
import { startDaemonEarly } from '../main/daemon/spawn.ts';
import { absolutizePathVariables, cacheDir, findWorkspace, homeProblem } from '../main/paths.ts';
import { requireWithCodeCache } from '../main/code-cache.ts';
import { exitCode } from './exit-code.ts';
import { mark } from '../workers/shared/timeline.ts';
import type * as ConfigCommands from './config-fast.ts';
import type * as Fast from './fast.ts';

// What the bin (cli.ts) runs for every command but `--version`, inside dist/cli.cjs: it routes the
// hot listings to dist/fast.cjs, the config commands and help to dist/config.cjs, and the rest to
// dist/main.js, starting the daemon for a prompt on the way.

// `niffler … | head` closes the pipe early: that is the reader's choice, not an error.
const onStreamError = (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
};

/**
 * Gives process.stdout and process.stderr that handler when they are first used: Node makes each
 * stream on first access (a few ms of loading its stream modules), and a command that prints
 * nothing, or prints by hand (`--version`), should not pay for it.
 */
const handleClosedPipes = (): void => {
  for (const name of ['stdout', 'stderr'] as const) {
    const descriptor = Object.getOwnPropertyDescriptor(process, name);
    const make = descriptor?.get?.bind(process);
    if (!make || !descriptor?.configurable) {
      process[name].on('error', onStreamError);
      continue;
    }
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: descriptor.enumerable ?? true,
      get() {
        const stream = make() as NodeJS.WriteStream;
        stream.on('error', onStreamError);
        Object.defineProperty(process, name, { ...descriptor, get: () => stream });
        return stream;
      },
    });
  }
};
handleClosedPipes();

const fromSource = import.meta.url.endsWith('.ts');

/**
 * The hot read-only listings, called by scripts and status lines many times a minute, skip the
 * command tree when their arguments are exactly these flags (anything else, `--help` included,
 * goes through commander as usual). They live in one bundle, dist/fast.cjs (see fast.ts).
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

/** The command tree's top-level commands (program.ts): any other first word begins a prompt. */
const COMMANDS = new Set([
  'config',
  'init',
  'trust',
  'tools',
  'agents',
  'task',
  'undo',
  'sessions',
  'mcp',
  'daemon',
  'help',
]);

/**
 * Whether `args` ask for a prompt or the interactive session, which talk to this workspace's
 * daemon: then a daemon that does not run yet is started at once (`startDaemonEarly`), while the
 * front-end loads. Anything else — a command, help, another directory, no daemon — leaves it to
 * the command.
 */
const wantsDaemonSoon = (args: string[]): boolean => {
  const never = ['--no-daemon', '-C', '--cwd', '-h', '--help', '-v', '--version'];
  if (args.some((arg) => never.includes(arg) || arg.startsWith('--cwd='))) return false;
  if (args.some((arg) => arg === '-p' || arg === '--prompt' || arg.startsWith('--prompt=')))
    return true;
  // The first word that is no option's value: a command's name, or a prompt's first word.
  const valued = ['-m', '--model', '--set', '-r', '--resume', '--at-turn', '-a', '--agent'];
  const first = args.find((arg, i) => !arg.startsWith('-') && !valued.includes(args[i - 1] ?? ''));
  return first === undefined ? true : !COMMANDS.has(first);
};

/** Options of the root command that take a value (the next argument). */
const VALUED = [
  '-C',
  '--cwd',
  '-m',
  '--model',
  '--set',
  '-r',
  '--resume',
  '--at-turn',
  '-a',
  '--agent',
];

/**
 * Whether `args` are a command that answers from the config alone (`mcp list`, `config
 * show|path`, `trust --diff`, `agents`, `task list|show|history`) or help: those run from
 * dist/config.cjs, which loads none of the rest (see config-fast.ts). The root's options come before the command (the
 * command tree takes them only there); a prompt is never one.
 */
const isConfigCommand = (args: string[]): boolean => {
  let at = 0;
  for (; at < args.length && args[at]!.startsWith('-'); at++) {
    const arg = args[at]!;
    if (arg === '-p' || arg === '--prompt' || arg.startsWith('--prompt=')) return false;
    if (arg === '-h' || arg === '--help') return true;
    if (VALUED.includes(arg)) at++;
  }
  const [command, sub] = args.slice(at);
  if (args.slice(at).some((arg) => arg === '-h' || arg === '--help') || command === 'help')
    return true;
  return (
    (command === 'mcp' && sub === 'list') ||
    (command === 'config' && (sub === 'show' || sub === 'path')) ||
    (command === 'trust' && args.includes('--diff')) ||
    command === 'agents' ||
    (command === 'task' && (sub === 'list' || sub === 'show' || sub === 'history'))
  );
};

/** Digests of dist/fast.cjs and dist/config.cjs, set by the build (scripts/build-options.mjs). */
declare const __NIFFLER_FAST_BUILD__: string | undefined;
declare const __NIFFLER_CONFIG_BUILD__: string | undefined;

/** The fast path's bundle, through a code cache made after a run (see code-cache.ts). */
const loadFast = async (): Promise<typeof Fast> =>
  fromSource
    ? import('./fast.ts')
    : requireWithCodeCache<typeof Fast>(
        fileURLToPath(new URL('./fast.cjs', import.meta.url)),
        cacheDir('code'),
        typeof __NIFFLER_FAST_BUILD__ === 'string' ? __NIFFLER_FAST_BUILD__ : '',
        { typicalRun: (fast) => fast.typicalRun() },
      );

const configBuild = (): string =>
  typeof __NIFFLER_CONFIG_BUILD__ === 'string' ? __NIFFLER_CONFIG_BUILD__ : '';

/** The config commands' bundle, through a code cache made after a run that needed no zod. */
const loadConfigCommands = async (): Promise<typeof ConfigCommands> =>
  fromSource
    ? import('./config-fast.ts')
    : requireWithCodeCache<typeof ConfigCommands>(
        fileURLToPath(new URL('./config.cjs', import.meta.url)),
        cacheDir('code'),
        configBuild(),
        { typicalRun: (commands) => commands.typicalRun() },
      );

/**
 * Everything the bin does after `--version` (see cli.ts): the fast paths, the config commands,
 * an early daemon for a prompt, and the main build. Resolves to the exit code.
 */
export const launch = async (argv: string[]): Promise<number> => {
  mark('front-end started', true);
  const args = argv.slice(2);
  // Before any file under $NIFFLER_HOME is read or written (the code cache first of all).
  absolutizePathVariables();
  const problem = homeProblem();
  if (problem) {
    process.stderr.write(`niffler: ${problem}\n`);
    return 1;
  }
  const route = fastRoute(args);
  if (route) {
    const fast = await loadFast();
    return route(fast).then(exitCode, (error: unknown) => fast.reportError(error));
  }
  if (isConfigCommand(args))
    return (await loadConfigCommands()).run(argv, configBuild() || 'source');
  if (wantsDaemonSoon(args)) startDaemonEarly(findWorkspace(process.cwd()).root);
  // Node caches the compiled code of the main build's modules on disk: later starts skip parsing
  // and compiling them. In $NIFFLER_HOME, never the shared temp directory, where another user
  // could plant an entry that then runs as you.
  enableCompileCache?.(cacheDir('compile'));
  return (await import('./main.ts')).run(argv);
};
