import { Command, InvalidArgumentError } from 'commander';
import { VERSION } from '../main/version.ts';
import type { GlobalOptions } from './context.ts';
import {
  addConfigCommands,
  addDaemonCommands,
  addExtensionCommands,
  addLspCommands,
  addSessionCommands,
  addToolCommands,
} from './program-commands.ts';
import { addMcpCommands } from './program-mcp.ts';
import { acceptGlobalsEverywhere, collect, globals } from './program-options.ts';

/** `niffler` itself: its options, and a prompt answered in one shot or the interactive session. */
const rootCommand = (): Command => {
  const program = new Command('niffler')
    .description('An AI assistant for the terminal that lives in your git repository.')
    .version(VERSION, '-v, --version')
    .option('-C, --cwd <dir>', 'run as if started in <dir>')
    .option('-m, --model <name>', 'model to use (a key of `models` in the config)')
    .option(
      '--set <key=value>',
      'override a config key, e.g. --set daemon.idleMinutes=5 (repeatable)',
      collect,
    )
    .option('--json', 'machine-readable output')
    .option('--no-daemon', 'run the engine in this process instead of the per-repository daemon')
    .option('-p, --prompt [text]', 'one-shot: answer this prompt (or stdin) and exit')
    .option('-c, --continue', 'continue the latest session of this workspace')
    .option('-r, --resume <id>', 'resume a session (see niffler sessions)')
    .option(
      '--at-turn <n>',
      'with --resume: a new session going on from the end of turn N (what came later, compactions too, is left out)',
      (value: string) => {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1)
          throw new InvalidArgumentError('expected a turn number (1, 2, …)');
        return n;
      },
    )
    .option('-y, --yes', 'approve every tool call that the config does not deny')
    .option('-a, --agent <name>', 'agent profile: build (default), plan, review, or yours')
    .argument(
      '[prompt...]',
      'a prompt (with -p, or when stdin is not a terminal: answered in one shot)',
    )
    .action(async (words: string[], _opts, command: Command) => {
      const options = globals(command) as GlobalOptions & {
        prompt?: string | boolean;
        continue?: boolean;
        resume?: string;
        atTurn?: number;
      };
      const positional = words.join(' ').trim();
      const oneShot = options.prompt !== undefined || !process.stdin.isTTY || !process.stdout.isTTY;
      if (positional)
        options.prompt = [typeof options.prompt === 'string' ? options.prompt : '', positional]
          .filter(Boolean)
          .join(' ');
      if (oneShot) await (await import('./commands/oneshot.ts')).oneShot(options);
      else await (await import('./commands/interactive.ts')).interactive(options);
    })
    .showHelpAfterError('(run niffler --help for usage)')
    .enablePositionalOptions()
    .exitOverride();
  return program;
};

/** Examples under `niffler --help`. */
const addExamples = (program: Command): void => {
  program.addHelpText(
    'after',
    `
Examples:
  niffler                                   open the interactive session
  niffler -p "what does src/ do?"           answer once, on stdout
  niffler --continue -p "and the tests?"    go on with the latest session
  niffler mcp add memory -- npx -y @modelcontextprotocol/server-memory
  niffler mcp status                        live state of this repository's MCP servers
  niffler config show --origin              the merged config, each value with its file:line
  niffler sessions search flaky test        sessions that mention both words
  niffler --agent plan -p "how would you split src/engine?"   answer with the read-only profile`,
  );
};

/** Builds the command tree; each action imports its command module only when it runs. */
export const buildProgram = (): Command => {
  const program = rootCommand();
  addExamples(program);
  addConfigCommands(program);
  addToolCommands(program);
  addExtensionCommands(program);
  addSessionCommands(program);
  addMcpCommands(program);
  addLspCommands(program);
  addDaemonCommands(program);
  acceptGlobalsEverywhere(program);
  return program;
};
