/**
 * The built-in tools' names and the command task's, without their argument schemas: what the
 * tools worker needs to route a task. The schemas (zod, a few MiB in every thread that loads it)
 * stay in `tools.ts`, on the host's side, which validates the arguments before a task is sent.
 */
export const BUILTIN_TOOL_NAMES = [
  'read_file',
  'list_dir',
  'path_info',
  'write_file',
  'edit_file',
  'glob',
  'grep',
  'bash',
  'fetch',
  'todo',
] as const;

export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

const NAMES: ReadonlySet<string> = new Set(BUILTIN_TOOL_NAMES);

/** True when `name` is a built-in tool. */
export const isBuiltinTool = (name: string): name is BuiltinToolName => NAMES.has(name);

/**
 * The pool task that runs a command for niffler itself — a hook, a repository tool, a custom
 * command's `` !`cmd` `` — never offered to the model: bash's sandbox, limits and minimal
 * environment, the input on stdin, each stream kept up to `maxOutputBytes`.
 */
export const COMMAND_TASK = 'niffler:command';
