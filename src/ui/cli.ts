#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import { VERSION } from '../main/version.ts';
import type { GlobalOptions } from './context.ts';
import { reportError } from './render/output.ts';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Builds the command tree; each action imports its command module only when it runs. */
export const buildProgram = (): Command => {
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
    .showHelpAfterError('(run niffler --help for usage)')
    .enablePositionalOptions()
    .exitOverride();

  const globals = (command: Command): GlobalOptions => command.optsWithGlobals<GlobalOptions>();

  const config = program.command('config').description('show and locate the configuration');
  config
    .command('show')
    .description('print the merged configuration, secrets redacted')
    .option('--origin', 'name the file (or env, flag, default) each value came from')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/config.ts')).configShow(globals(command)),
    );
  config
    .command('path')
    .description(
      'list the config files found and used, in precedence order, and the workspace root',
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/config.ts')).configPath(globals(command)),
    );

  program
    .command('init')
    .description('create .niffler/config.yaml and prompts at the workspace root (never overwrites)')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/init.ts')).init(globals(command)),
    );

  program
    .command('trust')
    .description("trust this repository's config to start its MCP servers and use its settings")
    .addOption(new Option('--revoke', 'withdraw the trust given to this repository'))
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/trust.ts')).trust(globals(command)),
    );

  return program;
};

const main = async (argv: string[]): Promise<number> => {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    return reportError(error);
  }
};

process.exitCode = await main(process.argv);
