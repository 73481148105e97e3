import { Option, type Command } from 'commander';
import type { GlobalOptions } from './context.ts';

// The options every command of the tree shares, and how a command reads them.

/** Adds up a repeatable option's values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * The options every command sees, its own and its parents': a global option may come before the
 * subcommand or after it (`niffler --set a=1 config show`, `niffler config show --set a=1`). A
 * value given wins over a default wherever each was; `--set` given in both places adds up.
 */
export const globals = (command: Command): GlobalOptions => {
  const chain: Command[] = [];
  for (let c: Command | null = command; c; c = c.parent) chain.unshift(c);
  const out: Record<string, unknown> = {};
  for (const c of chain)
    for (const [key, value] of Object.entries(c.opts())) {
      if (c.getOptionValueSource(key) === 'default' && key in out) continue;
      out[key] =
        key === 'set' && Array.isArray(out[key]) && Array.isArray(value)
          ? [...(out[key] as string[]), ...(value as string[])]
          : value;
    }
  return out;
};

/** The options of `niffler` itself that every command takes too, before or after its name. */
const GLOBAL_OPTIONS = (): Option[] => [
  new Option('-C, --cwd <dir>', 'run as if started in <dir>'),
  new Option('-m, --model <name>', 'model to use (a key of `models` in the config)'),
  new Option(
    '--set <key=value>',
    'override a config key, e.g. --set daemon.idleMinutes=5 (repeatable)',
  ).argParser(collect),
  new Option('--no-daemon', 'run the engine in this process instead of the per-repository daemon'),
];

/** Gives every command under `program` the global options it does not have itself. */
export const acceptGlobalsEverywhere = (program: Command): void => {
  const visit = (command: Command) => {
    for (const sub of command.commands) {
      const own = new Set(sub.options.map((o) => o.long));
      for (const option of GLOBAL_OPTIONS()) if (!own.has(option.long)) sub.addOption(option);
      visit(sub);
    }
  };
  visit(program);
};
