import { z } from 'zod';
import type { BuiltinToolName } from './tool-names.ts';
import { fail, type ToolResult } from './tool-result.ts';

// The built-in tools' arguments: one zod schema a tool, what the host validates a call with and
// what the model is shown as its JSON Schema (builtin-tools.ts).

const path = (what: string) => z.string().describe(what);
const count = (what: string, max: number) =>
  z.coerce.number().int().min(1).max(max).optional().describe(what);

const ReadFileArgs = z.object({
  path: path('File to read, relative to the workspace root or absolute.'),
  offset: count('First line to return, 1-based (default 1).', 1_000_000_000),
  limit: count('Number of lines to return (default 2000).', 100_000),
});

const ListDirArgs = z.object({
  path: path('Directory to list (default: the workspace root).').optional(),
  depth: count('Levels to descend (default 1, at most 10).', 10),
  hidden: z
    .boolean()
    .optional()
    .describe('Include dotfiles (default false). .git is never listed.'),
});

const PathInfoArgs = z.object({ path: path('File, directory or symlink to describe.') });

const WriteFileArgs = z.object({
  path: path('File to create or overwrite. Missing parent directories are created.'),
  content: z.string().describe('The complete new content of the file.'),
});

const EditFileArgs = z.object({
  path: path('File to edit.'),
  oldText: z.string().describe('Exact text to replace, including whitespace; must occur once.'),
  newText: z.string().describe('Text to put in its place.'),
  replaceAll: z.boolean().optional().describe('Replace every occurrence (default false).'),
});

const page = {
  head_limit: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .describe(
      'Show at most this many entries (lines, files or counts); 0 or absent: as many as fit.',
    ),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000_000)
    .optional()
    .describe(
      'Skip this many entries first: to continue where a result stopped (it says the offset).',
    ),
};

const GlobArgs = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      'Glob such as "src/**/*.ts" or "**/*.{ts,tsx}"; a pattern without "/" matches file names at any depth.',
    ),
  path: path('Directory to search (default: the workspace root).').optional(),
  ...page,
});

const lines = (what: string) =>
  z.coerce.number().int().min(0).max(1000).optional().describe(`content: ${what}.`);

const GrepArgs = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Regular expression (JavaScript syntax; a leading (?i) works) matched line by line.'),
  path: path('File or directory to search (default: the workspace root).').optional(),
  glob: z
    .string()
    .optional()
    .describe(
      'Only files matching this glob, e.g. "*.ts" or "src/**/*.{ts,tsx}"; "!*.min.js" leaves files out.',
    ),
  type: z
    .string()
    .optional()
    .describe(
      "Only files of this type (ripgrep's names): js, ts, py, rust, go, java, c, cpp, md, json, yaml, …",
    ),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe(
      'content (default): matching lines as "path:line: text"; files_with_matches: the paths; count: "path: N" per file.',
    ),
  '-i': z.boolean().optional().describe('Match case-insensitively (default false).'),
  ignoreCase: z.boolean().optional().describe('The same as -i.'),
  '-n': z.boolean().optional().describe('content: show line numbers (default true).'),
  '-A': lines('lines shown after each match'),
  '-B': lines('lines shown before each match'),
  '-C': lines('lines shown before and after each match'),
  multiline: z
    .boolean()
    .optional()
    .describe(
      'Let a match span lines ("." matches a newline too), e.g. "struct \\{[\\s\\S]*?field".',
    ),
  ...page,
});

const BashArgs = z.object({
  command: z.string().min(1).describe('Shell command, run with bash -c in the workspace root.'),
  timeout: z.coerce
    .number()
    .positive()
    .max(86_400)
    .optional()
    .describe('Seconds before the command is ended (default 120, at most 600).'),
});

const FetchArgs = z.object({
  url: z.string().describe('http:// or https:// URL to GET. HTML is returned as markdown.'),
});

const TodoArgs = z.object({
  action: z.enum(['add', 'update', 'list']).describe('add items, update one item, or list.'),
  items: z.array(z.string().min(1)).optional().describe('add: the texts of the new items.'),
  id: z.coerce.number().int().min(1).max(100_000).optional().describe('update: the item id.'),
  status: z
    .enum(['pending', 'in_progress', 'done', 'cancelled'])
    .optional()
    .describe('update: the new status.'),
  text: z.string().min(1).optional().describe('update: the new text.'),
});

/** Argument schemas of the built-in tools, by name. The host validates with these (`parseToolArgs`). */
export const TOOL_ARGS = {
  read_file: ReadFileArgs,
  list_dir: ListDirArgs,
  path_info: PathInfoArgs,
  write_file: WriteFileArgs,
  edit_file: EditFileArgs,
  glob: GlobArgs,
  grep: GrepArgs,
  bash: BashArgs,
  fetch: FetchArgs,
  todo: TodoArgs,
} as const;

// The names the worker routes by are exactly the schemas' (checked both ways at compile time).
type SchemaNames = keyof typeof TOOL_ARGS;
const _everySchemaNamed: Record<SchemaNames, BuiltinToolName> = {} as Record<
  BuiltinToolName,
  SchemaNames
>;
void _everySchemaNamed;

/**
 * The arguments of a call to built-in `name`, validated (and coerced: a number given as a
 * string) — what the tools worker is given; else the `invalid-args` result the model sees.
 */
export const parseToolArgs = <N extends BuiltinToolName>(
  name: N,
  args: unknown,
): { ok: true; args: ToolArgs<N> } | { ok: false; result: ToolResult } => {
  const parsed = TOOL_ARGS[name].safeParse(args ?? {});
  if (parsed.success) return { ok: true, args: parsed.data as ToolArgs<N> };
  return {
    ok: false,
    result: fail('invalid-args', `${name}: invalid arguments:\n${z.prettifyError(parsed.error)}`),
  };
};

export type ToolArgs<N extends BuiltinToolName> = z.infer<(typeof TOOL_ARGS)[N]>;
