import path from 'node:path';
import { isObject } from '../../workers/shared/is-object.ts';

// The one table between Claude Code's tools and niffler's: agent files and commands name tools
// Claude Code's way (`Read`, `mcp__memory__create`), and hooks written for Claude Code read its
// tool names and input fields and answer in them. Both directions are read from here.

/** A niffler tool as Claude Code knows it: its name, other names, and its input fields. */
interface ClaudeTool {
  /** The name Claude Code's hooks receive as `tool_name`. */
  name: string;
  /** Other Claude Code names that stand for it (matchers and agent files may use them). */
  also?: readonly string[];
  /** niffler's argument → Claude Code's field. */
  fields: Readonly<Record<string, string>>;
  /** Claude Code's fields that hold a path, always absolute in its hooks' input. */
  paths?: readonly string[];
}

const TOOLS: Readonly<Record<string, ClaudeTool>> = {
  read_file: {
    name: 'Read',
    fields: { path: 'file_path', offset: 'offset', limit: 'limit' },
    paths: ['file_path'],
  },
  write_file: {
    name: 'Write',
    fields: { path: 'file_path', content: 'content' },
    paths: ['file_path'],
  },
  edit_file: {
    name: 'Edit',
    also: ['MultiEdit', 'NotebookEdit'],
    fields: {
      path: 'file_path',
      oldText: 'old_string',
      newText: 'new_string',
      replaceAll: 'replace_all',
    },
    paths: ['file_path'],
  },
  bash: { name: 'Bash', fields: { command: 'command', timeout: 'timeout' } },
  glob: { name: 'Glob', fields: { pattern: 'pattern', path: 'path' }, paths: ['path'] },
  grep: {
    name: 'Grep',
    fields: { pattern: 'pattern', path: 'path', glob: 'glob', ignoreCase: '-i' },
    paths: ['path'],
  },
  list_dir: { name: 'LS', fields: { path: 'path' }, paths: ['path'] },
  fetch: { name: 'WebFetch', fields: { url: 'url' } },
  todo: { name: 'TodoWrite', fields: {} },
  task: { name: 'Agent', also: ['Task'], fields: { prompt: 'prompt', agent: 'subagent_type' } },
  lsp: { name: 'LSP', fields: {} },
};

/** Claude Code's name (or other name) → niffler's. */
const BY_CLAUDE_NAME: ReadonlyMap<string, string> = new Map(
  Object.entries(TOOLS).flatMap(([ours, tool]) =>
    [tool.name, ...(tool.also ?? [])].map((claude): [string, string] => [claude, ours]),
  ),
);

/** Milliseconds in Claude Code's Bash `timeout`, seconds in niffler's. */
const MS = 1000;

/**
 * A tool name or glob as written in a Claude Code (or niffler) file, in niffler's names:
 * `Read` → `read_file`, `mcp__memory__create` → `memory__create`; niffler names pass unchanged.
 * Undefined for a rule niffler cannot hold to (`Bash(git add:*)`: one command, not the tool).
 */
export const nifflerToolName = (name: string): string | undefined => {
  const trimmed = name.trim();
  if (/\(.*\)$/.test(trimmed)) return undefined;
  if (trimmed.startsWith('mcp__')) return trimmed.slice('mcp__'.length);
  return BY_CLAUDE_NAME.get(trimmed) ?? trimmed;
};

/** The name Claude Code's hooks know a niffler tool by: `Bash`, `mcp__memory__create`, or its own. */
export const claudeToolName = (name: string, kind: string): string =>
  TOOLS[name]?.name ?? (kind === 'mcp' ? `mcp__${name}` : name);

/** The names a tool is known by, for niffler's own hook matchers: niffler's, and Claude Code's. */
export const toolAliases = (name: string, kind: string): string[] => {
  const tool = TOOLS[name];
  return [
    name,
    ...(tool ? [tool.name, ...(tool.also ?? [])] : []),
    ...(kind === 'mcp' ? [`mcp__${name}`] : []),
  ];
};

/**
 * A call's arguments as Claude Code's hooks read them: its field names (`file_path`,
 * `old_string`…), paths absolute (from `root`), bash's timeout in milliseconds. Arguments of
 * tools Claude Code has no name for pass unchanged.
 */
export const toClaudeInput = (name: string, args: unknown, root: string): unknown => {
  const tool = TOOLS[name];
  if (!tool || !isObject(args)) return args;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    const field = tool.fields[key] ?? key;
    if (tool.paths?.includes(field) && typeof value === 'string')
      out[field] = path.resolve(root, value);
    else if (name === 'bash' && field === 'timeout' && typeof value === 'number')
      out[field] = value * MS;
    else out[field] = value;
  }
  return out;
};

/**
 * What a Claude Code hook gave as a call's arguments (`updatedInput`), in niffler's names: each
 * field the table knows back to niffler's (bash's timeout back to seconds); fields niffler's tool
 * has no use for (`description`, `run_in_background`) are left out.
 */
export const fromClaudeInput = (
  name: string,
  input: Record<string, unknown>,
): Record<string, unknown> => {
  const tool = TOOLS[name];
  if (!tool) return input;
  const back = new Map(Object.entries(tool.fields).map(([ours, theirs]) => [theirs, ours]));
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input)) {
    const key = back.get(field);
    if (key === undefined) continue;
    out[key] =
      name === 'bash' && key === 'timeout' && typeof value === 'number' ? value / MS : value;
  }
  return out;
};

/**
 * A call's result as Claude Code's PostToolUse hooks read `tool_response`: niffler's result
 * (`ok`, `output`…) with the fields Claude Code's tools give that scripts read — `filePath` for
 * file tools, `stdout`/`stderr` for Bash, `success`.
 */
export const toClaudeResponse = (
  name: string,
  args: unknown,
  response: Record<string, unknown>,
  root: string,
): Record<string, unknown> => {
  const input = toClaudeInput(name, args, root);
  const file = isObject(input) ? input['file_path'] : undefined;
  return {
    ...response,
    success: response['ok'] === true,
    ...(typeof file === 'string' ? { filePath: file } : {}),
    ...(name === 'bash'
      ? { stdout: response['output'] ?? '', stderr: '', interrupted: false }
      : {}),
  };
};

/** A list written as YAML or as Claude Code's comma-separated string (`Read, Grep, Glob`). */
export const listOf = (value: string | string[] | undefined): string[] | undefined =>
  value === undefined
    ? undefined
    : (typeof value === 'string' ? value.split(',') : value).map((s) => s.trim()).filter(Boolean);
