import type { MessagePort } from 'node:worker_threads';
import type { BwrapProbe, ResourceLimits, SandboxMode } from './sandbox.ts';
import type { SearchAsk, SearchReply } from './search.ts';

// What the engine and a tools-pool task say to each other: where a call may act, the task, the
// messages while it runs, and a command's spec and outcome. The tools' names, argument schemas and
// definitions are declared in their own modules and offered from here, the tools' one address.
export {
  BUILTIN_TOOL_NAMES,
  COMMAND_TASK,
  isBuiltinTool,
  type BuiltinToolName,
} from './tool-names.ts';
export { parseToolArgs, type ToolArgs } from './tool-args.ts';
export { builtinTools, type ToolDefinition } from './builtin-tools.ts';

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
