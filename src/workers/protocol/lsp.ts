import type { SandboxPolicy } from './sandbox.ts';
import type { WireError } from './wire-error.ts';

/** The channel between the engine (`src/main/threads/lsp.ts`) and the LSP worker. Types only. */

/**
 * A language server's state, the same word in `lsp status`'s table, its JSON, `/lsp` and the
 * docs. `missing`: no command for it was found; `stopped`: it could run but has not been started
 * (no file of its language yet, or no session); `degraded`: it runs but stopped answering.
 */
export const LSP_SERVER_STATES = [
  'disabled',
  'untrusted',
  'missing',
  'stopped',
  'starting',
  'ready',
  'degraded',
  'failed',
] as const;
export type LspServerState = (typeof LSP_SERVER_STATES)[number];

/** Where a server's definition comes from: niffler's table, your config, the repository's. */
export type LspSource = 'builtin' | 'yours' | 'repository';

/** Everything the worker needs to run one language server; built by `src/main/lsp/servers.ts`. */
export interface LspServerSpec {
  name: string;
  /** An absolute path, found on PATH, in the repository's node_modules/.bin, or configured. */
  command: string;
  args: string[];
  /** File name endings it serves (`.ts`), with the LSP language id of each. */
  languages: Record<string, string>;
  initializationOptions?: unknown;
  /** Added to the safe base environment (PATH, HOME, USER, LANG, TERM, SHELL, TMPDIR). */
  env?: Record<string, string>;
  /** Run in bubblewrap under this policy (absolute paths): `lsp.<name>.sandbox`. */
  sandbox?: SandboxPolicy;
  source: LspSource;
}

/** Restart, start-up, answer and flood limits; defaults: 500 ms → 30 s backoff, 5 failures in 5 min. */
export interface LspTiming {
  initialDelayMs?: number;
  maxDelayMs?: number;
  maxFailures?: number;
  failureWindowMs?: number;
  /** Spawn + initialize; a server that takes longer is ended and restarted. */
  startupTimeoutMs?: number;
  /** A server that answers nothing for this long while asked something is ended and restarted. */
  hungAfterMs?: number;
  /** Terminate → kill grace when stopping its process group. */
  killGraceMs?: number;
  /** A server that sends more than this within 10 s is ended (a flood); default 64 MiB. */
  floodBytes?: number;
}

/** `workerData` of the LSP worker. */
export interface LspWorkerData {
  /** The workspace root: the servers' root URI; nothing outside it reaches the model. */
  root: string;
  servers: LspServerSpec[];
  /** Never read even inside the root (`$NIFFLER_HOME`). */
  excluded: string[];
  /** `$NIFFLER_HOME/logs/lsp/<key>`: one rotating `<server>.log` per server. */
  logsDir: string;
  /** Where each server's process group is recorded while it runs (see process-group.ts). */
  serversDir?: string;
  timing?: LspTiming;
}

/** A server's status, as `niffler lsp status` shows it. */
export interface LspServerStatus {
  name: string;
  state: LspServerState;
  /** The command as resolved (or as configured, when missing), and where its definition is from. */
  command: string;
  source: LspSource;
  extensions: string[];
  pid: number | null;
  startedAt: number | null;
  restarts: number;
  /** Documents it has open now. */
  files: number;
  /** Epoch ms of the last diagnostics it gave (pushed or asked for). */
  lastDiagnosticsAt: number | null;
  lastError: { message: string; at: number } | null;
  /** Why it is disabled, untrusted, missing or stopped: what to do to have it run. */
  reason?: string;
  nextRestartAt: number | null;
  /** Recent notes: files it was not given (too large, binary), what it said outside the workspace. */
  notes: { message: string; at: number }[];
  /** How diagnostics are read: asked for (LSP pull, or tsserver's own request) or waited for. */
  diagnostics?: 'pull' | 'tsserver' | 'push';
  sandbox?: 'bwrap';
  logFile?: string;
}

/** One diagnostic as the model reads it: 1-based line and column. */
export interface LspDiagnostic {
  /** Relative to the workspace root. */
  file: string;
  line: number;
  column: number;
  severity: 'error' | 'warning' | 'info' | 'hint';
  /** The server's code, as it would be printed (`TS2322`, `reportMissingImports`, `E0308`). */
  code?: string;
  message: string;
}

/** What a diagnosed file came to. */
export interface LspFileOutcome {
  /** Relative to the workspace root. */
  file: string;
  server: string;
  /**
   * `checked`: the server answered for this version; `timeout`: not before the deadline;
   * `skipped`: not given to a server (`reason` says why); `no-server`: none serves its language.
   */
  outcome: 'checked' | 'timeout' | 'skipped' | 'no-server';
  /**
   * Errors (and warnings, when asked) not there before the change, in the file's order — or,
   * without `baseline`, all of them: what the file had before was not known.
   */
  introduced: LspDiagnostic[];
  baseline: boolean;
  /** All errors and warnings of the file after the change. */
  errors: number;
  warnings: number;
  /** From the change to the answer. */
  ms: number;
  reason?: string;
}

/** A question of the `lsp` tool; line and column are 1-based. */
export interface LspQuery {
  operation: 'definition' | 'references' | 'hover' | 'symbols' | 'diagnostics';
  /** Absolute path (the host resolves and confines it). */
  file?: string;
  line?: number;
  column?: number;
  symbol?: string;
  /** `symbols` without a file: the workspace's symbols matching this. */
  query?: string;
}

/** Request/response pairs: `params` travel with `{ type, id }`, the reply is `result`. */
export type LspCalls = {
  status: { params: object; result: LspServerStatus[] };
  /**
   * Starts the servers named that do not run yet, in the background, and answers at once. Each
   * opens its `warmFile` (a file of its language) as soon as it runs, so that its project is
   * loaded by the first edit.
   */
  start: { params: { servers: { name: string; warmFile?: string }[] }; result: object };
  /**
   * Before a change: each file's content as it is now goes to its server (opened, or changed),
   * and its diagnostics are asked for, so what the change introduces can be told apart.
   */
  prepare: { params: { files: string[] }; result: object };
  /**
   * After a change: each file's new content goes to its server, and its diagnostics come back
   * once it answers, or at `deadline` (epoch ms) with what is known. `gone`: files removed.
   */
  diagnose: {
    params: { files: string[]; gone?: string[]; deadline: number; warnings: boolean };
    result: LspFileOutcome[];
  };
  /** The `lsp` tool: compact text, or an error saying what to do. */
  query: { params: LspQuery & { deadline: number }; result: { text: string } };
  /** Config reload: changed servers restart, new ones can start, removed ones stop. */
  'update-servers': { params: { servers: LspServerSpec[] }; result: object };
  /** Stops every server (process groups ended); the worker exits afterwards. */
  shutdown: { params: object; result: object };
};

type LspMethod = keyof LspCalls;

export type LspRequest =
  | { [K in LspMethod]: { type: K; id: number } & LspCalls[K]['params'] }[LspMethod]
  /** Aborts request `id`. */
  | { type: 'cancel'; id: number };

export type LspEvent =
  | { type: 'ready' }
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: WireError }
  | { type: 'progress'; id: number; progress: number; total?: number; message?: string }
  | { type: 'status'; status: LspServerStatus }
  | {
      type: 'log';
      level: 'debug' | 'info' | 'warn' | 'error';
      msg: string;
      data?: Record<string, unknown>;
    };
