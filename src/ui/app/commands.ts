import type { CommandInfo, SkillInfo } from '../../main/protocol.ts';

/** A slash command as `/help` lists it and `/` completes it. */
export interface SlashCommand {
  name: string;
  args?: string;
  description: string;
}

const SLASH_COMMANDS: SlashCommand[] = [
  { name: 'help', description: 'commands and keys' },
  {
    name: 'mcp',
    args: '[start|stop|restart NAME]',
    description: 'MCP servers: status table, or start/stop/restart one',
  },
  {
    name: 'lsp',
    description: 'language servers: state, pid, files open, last diagnostics',
  },
  {
    name: 'tools',
    args: '[on|off NAME]',
    description: 'list tools; switch a server or tool on or off for this session',
  },
  {
    name: 'agent',
    args: '[NAME]',
    description: 'agent profiles, or use NAME from the next message on (shift-tab cycles)',
  },
  {
    name: 'model',
    args: '[NAME]',
    description: 'show the models, or use NAME from the next message on',
  },
  {
    name: 'skills',
    args: '[NAME [request]]',
    description: 'skills found; NAME activates one now (its instructions go to the model)',
  },
  { name: 'clear', description: 'start a new session (the old one stays on disk)' },
  { name: 'sessions', description: 'sessions of this workspace' },
  {
    name: 'resume',
    args: 'ID [TURN] | WORDS',
    description: 'continue an earlier session (from the end of TURN: a new one); WORDS: find one',
  },
  { name: 'cost', description: 'tokens and cost of this session' },
  {
    name: 'context',
    description: 'what the next request holds, part by part; compactions, cleared outputs',
  },
  {
    name: 'undo',
    args: '[TURN]',
    description: 'put back the files a turn changed (the last, by default)',
  },
  {
    name: 'compact',
    args: '[focus]',
    description: 'summarize older turns now, keeping what the focus names',
  },
  { name: 'config', description: 'config files and the main settings' },
  {
    name: 'trace',
    args: '[NAME]',
    description: "the last JSON-RPC messages of a server's protocol trace (or of all)",
  },
  { name: 'exit', description: 'leave niffler (also ctrl-d, or ctrl-c twice)' },
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

/** True for niffler's own slash commands: they win over custom commands of the same name. */
export const isBuiltinSlash = (name: string): boolean =>
  name === '?' || name === 'quit' || SLASH_COMMANDS.some((c) => c.name === name);

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

/** `/skills NAME`: the skill names that start with what is typed after `/skills `. */
export const completeSkill = (text: string, skills: readonly SkillInfo[] = []): string[] => {
  const match = /^\/skills\s+(\S*)$/.exec(text);
  if (!match) return [];
  const typed = match[1]!;
  const names = [
    ...new Set(
      skills
        .filter((s) => s.trust === 'yours' || s.trust === 'trusted')
        .filter((s) => s.description)
        .map((s) => s.name),
    ),
  ];
  return names.filter((n) => n.startsWith(typed) && n !== typed).map((n) => `/skills ${n}`);
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
