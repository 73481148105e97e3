import type { CommandInfo, SkillInfo } from '../../main/protocol.ts';
import type { SlashContext } from './slash/context.ts';
import { lspView, mcp, tools, trace } from './slash/servers.ts';
import { clear, compact, contextView, cost, resume, sessions, undo } from './slash/sessions.ts';
import { activatableSkills, agent, config, model, skills } from './slash/settings.ts';

/** What a command's argument completion may offer from. */
interface CompletionSource {
  skills: readonly SkillInfo[];
}

/**
 * One of niffler's slash commands: what `/help` lists, what `/` completes and what runs. Help,
 * completion and dispatch all read SLASH_COMMANDS, so a command is listed exactly when it runs.
 */
interface SlashCommand {
  name: string;
  /** Other names it answers to, neither listed nor completed (`/?`, `/quit`). */
  aliases?: string[];
  /** Its arguments as `/help` shows them. */
  args?: string;
  description: string;
  /** It changes the session: refused while a turn runs. */
  waitsForTurn?: boolean;
  /** The values its first argument may take that start with `typed` (tab completes them). */
  complete?: (typed: string, from: CompletionSource) => string[];
  /** Runs it; `text` is the whole command line. Throws with a message for the transcript. */
  run: (ctx: SlashContext, args: string[], text: string) => Promise<void> | void;
}

const SLASH_COMMANDS: SlashCommand[] = [
  {
    name: 'help',
    aliases: ['?'],
    description: 'commands and keys',
    run: (ctx) =>
      ctx.dispatch({
        type: 'output',
        title: 'Help',
        text: helpText(ctx.getState().extensions.commands),
      }),
  },
  {
    name: 'mcp',
    args: '[start|stop|restart NAME]',
    description: 'MCP servers: status table, or start/stop/restart one',
    run: mcp,
  },
  {
    name: 'lsp',
    description: 'language servers: state, pid, files open, last diagnostics',
    run: lspView,
  },
  {
    name: 'tools',
    args: '[on|off NAME]',
    description: 'list tools; switch a server or tool on or off for this session',
    run: tools,
  },
  {
    name: 'agent',
    args: '[NAME]',
    description: 'agent profiles, or use NAME from the next message on (shift-tab cycles)',
    run: agent,
  },
  {
    name: 'model',
    args: '[NAME]',
    description: 'show the models, or use NAME from the next message on',
    run: model,
  },
  {
    name: 'skills',
    args: '[NAME [request]]',
    description: 'skills found; NAME activates one now (its instructions go to the model)',
    complete: (typed, { skills: found }) =>
      activatableSkills(found).filter((n) => n.startsWith(typed) && n !== typed),
    // `/skills NAME [request]`: the engine activates the skill and sends it with the request.
    run: (ctx, args, text) => (args.length ? ctx.send(text) : skills(ctx)),
  },
  {
    name: 'clear',
    description: 'start a new session (the old one stays on disk)',
    waitsForTurn: true,
    run: clear,
  },
  { name: 'sessions', description: 'sessions of this workspace', run: sessions },
  {
    name: 'resume',
    args: 'ID [TURN] | WORDS',
    description: 'continue an earlier session (from the end of TURN: a new one); WORDS: find one',
    waitsForTurn: true,
    run: resume,
  },
  { name: 'cost', description: 'tokens and cost of this session', run: cost },
  {
    name: 'context',
    description: 'what the next request holds, part by part; compactions, cleared outputs',
    run: contextView,
  },
  {
    name: 'undo',
    args: '[TURN]',
    description: 'put back the files a turn changed (the last, by default)',
    waitsForTurn: true,
    run: undo,
  },
  {
    name: 'compact',
    args: '[focus]',
    description: 'summarize older turns now, keeping what the focus names',
    waitsForTurn: true,
    run: compact,
  },
  { name: 'config', description: 'config files and the main settings', run: config },
  {
    name: 'trace',
    args: '[NAME]',
    description: "the last JSON-RPC messages of a server's protocol trace (or of all)",
    run: trace,
  },
  {
    name: 'exit',
    aliases: ['quit'],
    description: 'leave niffler (also ctrl-d, or ctrl-c twice)',
    run: (ctx) => ctx.exit(),
  },
];

const KEYS: [string, string][] = [
  ['enter', 'send'],
  ['shift/alt-enter, ctrl-j, \\ enter', 'new line'],
  ['↑ / ↓', 'history (on the first / last line)'],
  ['tab', 'complete /command, /server:prompt and its arguments, @path or @server:uri'],
  ['@path', 'attach a file to the message'],
  ['@server:uri', "attach an MCP server's resource (niffler mcp resources lists them)"],
  ['/server:prompt …', "send an MCP server's prompt (arguments in order, or name=value)"],
  ['!command', 'run a shell command here (not sent to the model)'],
  ['shift-tab', 'next primary agent profile (build, plan, …)'],
  ['esc', 'cancel the running turn'],
  ['ctrl-o', 'expand tool results and reasoning'],
  ['ctrl-c twice, ctrl-d', 'exit'],
];

/** Splits `/name a b` into the name and its arguments; null when `text` is not a command. */
export const parseSlash = (text: string): { name: string; args: string[] } | null => {
  const trimmed = text.trim();
  if (!trimmed.startsWith('/') || trimmed.startsWith('//')) return null;
  const [name = '', ...args] = trimmed.slice(1).split(/\s+/);
  return { name: name.toLowerCase(), args };
};

/** Niffler's command of that name (or alias). */
const findSlash = (name: string): SlashCommand | undefined =>
  SLASH_COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));

/** True for niffler's own slash commands: they win over custom commands of the same name. */
export const isBuiltinSlash = (name: string): boolean => findSlash(name) !== undefined;

/** Command names (niffler's, then custom ones) that start with what was typed after `/`. */
export const completeSlash = (typed: string, custom: readonly CommandInfo[] = []): string[] => {
  const prefix = typed.replace(/^\//, '');
  return [
    ...SLASH_COMMANDS.filter((c) => c.name.startsWith(prefix.toLowerCase())).map((c) => c.name),
    ...custom
      .filter((c) => c.name.startsWith(prefix) && !isBuiltinSlash(c.name))
      .map((c) => c.name),
  ].map((name) => `/${name}`);
};

/** `/name ARG`: the whole lines its command's completion offers for the argument being typed. */
export const completeSlashArgs = (text: string, from: CompletionSource): string[] => {
  const [, name = '', typed = ''] = /^\/(\S+)\s+(\S*)$/.exec(text) ?? [];
  const command = findSlash(name);
  if (!command?.complete) return [];
  return command.complete(typed, from).map((value) => `/${command.name} ${value}`);
};

/** The `/help` text, custom commands (yours and the repository's) after niffler's. */
export const helpText = (custom: readonly CommandInfo[] = []): string => {
  const usage = SLASH_COMMANDS.map((c) => [
    `/${c.name}${c.args ? ` ${c.args}` : ''}`,
    c.description,
  ]);
  const mine = custom
    .filter((c) => !isBuiltinSlash(c.name))
    .map((c) => [
      `/${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ''}`,
      `${c.description} (${c.source})`,
    ]);
  const width = Math.max(...[...usage, ...mine, ...KEYS].map(([left = '']) => left.length));
  const rows = (list: [string, string][] | string[][]) =>
    list.map(([left = '', right = '']) => `  ${left.padEnd(width)}  ${right}`).join('\n');
  const customRows = mine.length ? `\n\nCustom commands\n${rows(mine)}` : '';
  return `Commands\n${rows(usage)}${customRows}\n\nKeys\n${rows(KEYS)}`;
};

/**
 * Runs one of niffler's slash commands (`text`: the whole line, by default rebuilt from the
 * name and arguments); throws with a message for the transcript when it fails or is unknown.
 */
export const runSlash = async (
  name: string,
  args: string[],
  ctx: SlashContext,
  text = [`/${name}`, ...args].join(' '),
): Promise<void> => {
  const command = findSlash(name);
  if (!command) throw new Error(`unknown command /${name}; /help lists the commands`);
  if (command.waitsForTurn && ctx.isBusy())
    throw new Error(`/${name} waits until the running turn ends (Esc cancels it)`);
  await command.run(ctx, args, text);
};
