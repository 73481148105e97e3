import path from 'node:path';
import picomatch from 'picomatch';

// Which hooks of an event run, as Claude Code decides it (its hooks reference): a matcher group's
// `matcher` over the event's names, then a handler's `if` rule over a tool call; and the command
// line an exec-form handler (`command` + `args`) runs.

/** Letters, digits, `_`, `-`, spaces, `,` and `|` only: names, compared exactly. */
const NAMES_ONLY = /^[A-Za-z0-9_\-\s,|]+$/;

/**
 * Whether `matcher` selects one of `names`: `*`, empty or none selects all; names separated by
 * `|` or `,` (letters, digits, `_`, `-`) are compared exactly; anything else is a regular
 * expression tested anywhere in a name (`mcp__memory__.*`, `^Notebook`). A pattern that does not
 * compile is compared as a name.
 */
export const matcherSelects = (matcher: string | undefined, names: readonly string[]): boolean => {
  const text = matcher?.trim() ?? '';
  if (text === '' || text === '*') return true;
  if (NAMES_ONLY.test(text)) {
    const wanted = text.split(/[|,]/).map((n) => n.trim());
    return names.some((n) => wanted.includes(n));
  }
  try {
    const pattern = new RegExp(text);
    return names.some((n) => pattern.test(n));
  } catch {
    return names.includes(text);
  }
};

/** A tool call as a handler's `if` rule sees it: Claude Code's name and input. */
export interface RuleCall {
  /** The names the call goes by (Claude Code's first). */
  names: readonly string[];
  input: unknown;
  root: string;
}

const field = (input: unknown, key: string): string | undefined => {
  const value = (input as Record<string, unknown> | undefined)?.[key];
  return typeof value === 'string' ? value : undefined;
};

/** `git *` (or the older `npm run test:*`) as a regular expression over one command. */
const commandPattern = (rule: string): RegExp => {
  const glob = rule.endsWith(':*') ? `${rule.slice(0, -2)}*` : rule;
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
};

/** The simple commands of a command line: split at `&&`, `||`, `;`, `|`, newlines and `$(`. */
const subcommands = (line: string): string[] =>
  line
    .split(/&&|\|\||[;|\n]|\$\(|`/)
    .map((part) => part.replace(/\)\s*$/, '').trim())
    .map((part) => part.replace(/^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+/, ''))
    .filter(Boolean);

/** Whether a path rule (`*.ts`, `src/**`) selects the file a call names. */
const pathSelects = (rule: string, input: unknown, root: string): boolean => {
  const file = field(input, 'file_path') ?? field(input, 'path');
  if (!file || rule.startsWith('/') || rule.startsWith('~')) return true;
  const relative = path.relative(root, path.resolve(root, file));
  return picomatch(rule, { dot: true, basename: !rule.includes('/') })(relative);
};

/**
 * Whether a handler's `if` rule (`Bash(git *)`, `Edit(*.ts)`, `WebFetch(domain:x.com)`, `Read`)
 * selects `call`. As in Claude Code it is a filter, not a guard: a rule it cannot read runs the
 * hook (fails open); on an event without a call, a hook with a rule never runs.
 */
export const ruleSelects = (rule: string | undefined, call: RuleCall | undefined): boolean => {
  if (rule === undefined) return true;
  if (!call) return false;
  const parsed = /^\s*([A-Za-z0-9_-]+)\s*(?:\((.*)\))?\s*$/s.exec(rule);
  if (!parsed) return true;
  const [, tool, argument] = parsed;
  if (!call.names.includes(tool!)) return false;
  if (argument === undefined || argument.trim() === '' || argument.trim() === '*') return true;
  const text = argument.trim();
  if (tool === 'Bash') {
    const command = field(call.input, 'command');
    if (command === undefined) return true;
    const pattern = commandPattern(text);
    return subcommands(command).some((part) => pattern.test(part));
  }
  if (tool === 'WebFetch' && text.startsWith('domain:')) {
    try {
      return new URL(field(call.input, 'url') ?? '').hostname === text.slice('domain:'.length);
    } catch {
      return true;
    }
  }
  return pathSelects(text, call.input, call.root);
};

/** A word quoted for bash: as written, whatever it holds. */
const shellQuote = (word: string): string =>
  /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * The command line a handler runs: its `command` as written (shell form: `$VAR` and `${VAR}` are
 * the shell's), or — with `args`, exec form — the program and each argument quoted as one word,
 * `${CLAUDE_PROJECT_DIR}` (and niffler's name for it) filled in as plain text.
 */
export const handlerLine = (hook: { command?: string; args?: string[] }, root: string): string => {
  const command = hook.command ?? '';
  if (!hook.args) return command;
  const fill = (word: string) =>
    word.replace(/\$\{(CLAUDE_PROJECT_DIR|NIFFLER_PROJECT_DIR)\}/g, () => root);
  return [command, ...hook.args].map((word) => shellQuote(fill(word))).join(' ');
};
