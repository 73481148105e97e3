import type { MessagePort } from 'node:worker_threads';
import { z } from 'zod';
import {
  BUILTIN_TOOL_NAMES,
  COMMAND_TASK,
  isBuiltinTool,
  type BuiltinToolName,
} from './tool-names.ts';
import type { BwrapProbe, ResourceLimits, SandboxMode } from './sandbox.ts';
import type { SearchAsk, SearchReply } from './search.ts';
import { fail, type ToolResult } from './tool-result.ts';

/** Limits a tool call runs under, resolved from `tools.output` and `tools.bash` in config. */
export interface ToolLimits {
  /** Characters of output given to the model; the rest is saved under `outputsDir`. */
  maxChars: number;
  /** Bytes a file tool reads at most in one piece. */
  maxFileBytes: number;
  /** Seconds a `bash` command runs when it asks for no timeout. */
  bashTimeout: number;
  /** Seconds a `bash` command may ask for at most. */
  bashMaxTimeout: number;
  /**
   * Seconds a `grep` or `glob` searches before it answers with what it found, marked incomplete
   * (`tools.searchLimits.timeout`).
   */
  searchSeconds: number;
}

/** How `bash` runs: resolved from `tools.bash` and the places niffler keeps private. */
export interface BashSettings {
  sandbox: SandboxMode;
  /** Whether a sandboxed command may use the network. */
  network: boolean;
  limits: ResourceLimits;
  /** Variables passed on from niffler's environment besides the minimal set. */
  passEnv: string[];
  /** Absolute paths a sandboxed command never sees: `$NIFFLER_HOME`, `~/.ssh` and the like. */
  hide: string[];
  /** bubblewrap as tried by the pool's owner; absent until bash first runs. */
  bwrap?: BwrapProbe;
  /** Said once per daemon, on the first call that runs without the sandbox it asked for. */
  note?: string;
  /** The user approved this call's git write (`git-write`): the workspace's `.git` is writable. */
  gitWritable?: boolean;
  /**
   * The session's environment file (`CLAUDE_ENV_FILE`, written by its SessionStart hooks): read
   * by bash before each command, as Claude Code does.
   */
  envFile?: string;
}

/** How `fetch` treats loopback, link-local and private addresses. */
export interface FetchSettings {
  /** Hosts, addresses and CIDR ranges (`tools.fetch.allowPrivate`) reached without asking. */
  allowPrivate: string[];
  /** What the user allowed for this one call after being asked. */
  granted?: string[];
}

/** Where a tool call may act. Every path is absolute; `allowedPaths` are already resolved. */
export interface ToolContext {
  /** The workspace root: file tools act inside it, `bash` runs in it. */
  root: string;
  /** Directories outside the root that file tools may also use (`tools.allowedPaths`). */
  allowedPaths: string[];
  /**
   * Directories file tools may read but never write, and sandboxed commands see read-only: the
   * session's active skills of yours (`~/.claude/skills/pdf`). Real paths.
   */
  readOnlyPaths?: string[];
  /**
   * Directories no file tool may read or write, even inside the root or an allowed path
   * (`$NIFFLER_HOME`); the outputs directory inside one stays readable.
   */
  excluded: string[];
  /** Where cut output is saved; `read_file` may read it, nothing may write it. */
  outputsDir: string;
  /** The session's todo list (JSON). */
  todoFile: string;
  limits: ToolLimits;
  bash: BashSettings;
  fetch: FetchSettings;
}

/**
 * One task of the tools pool. `port`, when given, carries `ToolControlMessage`s to the task and
 * `ToolPortMessage`s back to the owner.
 */
export interface ToolTask {
  tool: string;
  args: unknown;
  context: ToolContext;
  port?: MessagePort;
  /**
   * grep and glob: their owner runs the chunks they ask for on `port` on other threads of the
   * pool, this many at once (without it they search in their own thread).
   */
  searchThreads?: number;
}

/**
 * What a task tells its owner while it runs: the process groups it started, so the owner can end
 * them when it cancels the task (piscina then terminates the worker thread, which cannot).
 */
export type ToolPortMessage =
  { type: 'spawned'; pid: number } | { type: 'exited'; pid: number } | SearchAsk;

/**
 * What the owner tells a running task: `cancel` aborts it (processes ended, result `canceled`);
 * a search's asks are answered too.
 */
export type ToolControlMessage = { type: 'cancel' } | SearchReply;

const path = (what: string) => z.string().describe(what);
const count = (what: string, max: number) =>
  z.coerce.number().int().min(1).max(max).optional().describe(what);

export const ReadFileArgs = z.object({
  path: path('File to read, relative to the workspace root or absolute.'),
  offset: count('First line to return, 1-based (default 1).', 1_000_000_000),
  limit: count('Number of lines to return (default 2000).', 100_000),
});

export const ListDirArgs = z.object({
  path: path('Directory to list (default: the workspace root).').optional(),
  depth: count('Levels to descend (default 1, at most 10).', 10),
  hidden: z
    .boolean()
    .optional()
    .describe('Include dotfiles (default false). .git is never listed.'),
});

export const PathInfoArgs = z.object({ path: path('File, directory or symlink to describe.') });

export const WriteFileArgs = z.object({
  path: path('File to create or overwrite. Missing parent directories are created.'),
  content: z.string().describe('The complete new content of the file.'),
});

export const EditFileArgs = z.object({
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

export const GlobArgs = z.object({
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

export const GrepArgs = z.object({
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

export const BashArgs = z.object({
  command: z.string().min(1).describe('Shell command, run with bash -c in the workspace root.'),
  timeout: z.coerce
    .number()
    .positive()
    .max(86_400)
    .optional()
    .describe('Seconds before the command is ended (default 120, at most 600).'),
});

export const FetchArgs = z.object({
  url: z.string().describe('http:// or https:// URL to GET. HTML is returned as markdown.'),
});

export const TodoArgs = z.object({
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
export { BUILTIN_TOOL_NAMES, COMMAND_TASK, isBuiltinTool, type BuiltinToolName };

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

/**
 * What a built-in is, declared once on its definition below and read by every part that asks:
 * the approval path (the policy and the dialog), the capability filter, the gateway's
 * annotations and `niffler tools policy`.
 */
interface BuiltinTraits {
  /** True when the tool never changes anything: allowed without asking, run in parallel. */
  readOnly: boolean;
  /** It may change or delete what the workspace holds (MCP's destructiveHint). */
  destructive: boolean;
  /** It reaches outside the workspace: the network, any command (MCP's openWorldHint). */
  openWorld: boolean;
  /** The policy when config says nothing: `ask` when it needs the user's approval. */
  defaultPolicy: 'allow' | 'ask';
}

/** A tool as offered to the model. `parameters` is a JSON Schema object. */
export interface ToolDefinition extends BuiltinTraits {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Reads the workspace, changes nothing. */
const READS: BuiltinTraits = {
  readOnly: true,
  destructive: false,
  openWorld: false,
  defaultPolicy: 'allow',
};
/** Writes the workspace: asks first. */
const WRITES: BuiltinTraits = {
  readOnly: false,
  destructive: true,
  openWorld: false,
  defaultPolicy: 'ask',
};

const DESCRIPTIONS: Record<BuiltinToolName, BuiltinTraits & { description: string }> = {
  read_file: {
    ...READS,
    description:
      'Read a text file with line numbers, a page at a time (offset/limit). Images are returned ' +
      'as images. Also reads the files where cut tool output was saved.',
  },
  list_dir: {
    ...READS,
    description: 'List a directory as a tree, honouring .gitignore. Directories end with "/".',
  },
  path_info: {
    ...READS,
    description: 'Describe a path: type, size, modification time, mode and symlink target.',
  },
  write_file: {
    ...WRITES,
    description: 'Create or overwrite a file with the given content (atomic; creates parents).',
  },
  edit_file: {
    ...WRITES,
    description:
      'Replace an exact piece of text in a file and return the unified diff. oldText must occur ' +
      'exactly once unless replaceAll is true; read the file first to copy it exactly.',
  },
  glob: {
    ...READS,
    description:
      'Find files by glob pattern in the whole workspace, fast; skips what .gitignore, .ignore ' +
      'and hidden names leave out (as ripgrep). Paths sorted by modification time, newest first. ' +
      'A result that says [incomplete: ...] on its first line tells how to continue (offset or path).',
  },
  grep: {
    ...READS,
    description:
      'Search file contents with a regular expression in the whole workspace, fast; skips what ' +
      '.gitignore, .ignore and hidden names leave out (as ripgrep), and binary files. ' +
      'output_mode content gives "path:line: text" (-A/-B/-C for context), files_with_matches the ' +
      'paths, count the matches per file; filter with glob or type; page with head_limit and ' +
      'offset. A result that says [incomplete: ...] on its first line tells how to continue.',
  },
  bash: {
    ...WRITES,
    openWorld: true,
    description:
      'Run a shell command in the workspace root and return its combined output, exit code and ' +
      'signal. No stdin; the whole process group is ended on timeout.',
  },
  // A GET: it reaches out (open-world) and asks, but changes nothing here (not destructive).
  fetch: {
    readOnly: false,
    destructive: false,
    openWorld: true,
    defaultPolicy: 'ask',
    description: 'GET an http(s) URL and return its content; HTML is converted to markdown.',
  },
  // Changes only the session's own list: not read-only, not destructive, allowed.
  todo: {
    readOnly: false,
    destructive: false,
    openWorld: false,
    defaultPolicy: 'allow',
    description:
      "Keep the session's todo list to plan multi-step work: add items, update an item's " +
      'status or text, or list them. Every action returns the whole list.',
  },
};

const toParameters = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, { io: 'input' });
  return rest;
};

let builtinDefinitions: readonly ToolDefinition[] | undefined;

/**
 * The built-in tools as data for the model; no implementation is loaded. Built on first call (the
 * JSON Schemas cost time, and the tools worker, which imports this module, never needs them).
 */
export const builtinTools = (): readonly ToolDefinition[] =>
  (builtinDefinitions ??= (Object.keys(TOOL_ARGS) as BuiltinToolName[]).map((name) => {
    const { description, ...traits } = DESCRIPTIONS[name];
    return { name, description, parameters: toParameters(TOOL_ARGS[name]), ...traits };
  }));

export interface CommandSpec {
  command: string;
  /** Written to its stdin (then closed); none: stdin is closed at once. */
  input?: string;
  timeoutSeconds: number;
  /** Bytes of stdout and of stderr kept; a command that prints many times more is ended. */
  maxOutputBytes: number;
  /** Variables added to the minimal environment (`NIFFLER_PROJECT_DIR`, …). */
  env?: Record<string, string>;
  /** Directories it may write besides the workspace (a session's `CLAUDE_ENV_FILE` directory). */
  writable?: string[];
}

/** How a command ended, and what it printed (cut at `maxOutputBytes`). */
export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** `timeout`, `canceled`, or `flood`: it printed far more than is kept and was ended. */
  ended?: 'timeout' | 'canceled' | 'flood';
  /** Output was cut at `maxOutputBytes`. */
  cut: boolean;
  sandboxed: boolean;
  /** bash's note when it runs unsandboxed in `auto`. */
  note?: string;
}
