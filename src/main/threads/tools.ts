import path from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from '../config/schema.ts';
import { expandHome, hiddenFromSandbox, nifflerPaths, type Env } from '../paths.ts';
import type { BwrapProbe } from '../../workers/protocol/sandbox.ts';
import {
  builtinTools,
  COMMAND_TASK,
  isBuiltinTool,
  parseToolArgs,
  type CommandOutcome,
  type CommandSpec,
  type ToolContext,
  type ToolControlMessage,
  type ToolDefinition,
  type ToolPortMessage,
  type ToolTask,
} from '../../workers/protocol/tools.ts';
import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import { killGroup } from '../../workers/shared/process-group.ts';
import { probeBwrap } from '../../workers/shared/sandbox-command.ts';
import { GIT_WRITE } from '../trust/protected.ts';
import { WORKER_YOUNG_GENERATION_MB, workerExecArgv, workerFile } from './entry.ts';
import { whenAborted } from '../../workers/shared/abort.ts';

/**
 * One built-in tool call from the agent loop. `sessionId` picks the session's todo list;
 * `grants` are what the user allowed for this call when asked (a private address for fetch).
 */
export interface ToolCall {
  name: string;
  args: unknown;
  sessionId?: string;
  grants?: string[];
}

export interface ToolsHostOptions {
  /** The workspace root (real path). */
  root: string;
  /** The resolved `tools` section of the config. */
  tools: Config['tools'];
  env?: Env;
  /** Pool size; default 4. */
  maxThreads?: number;
  /** Milliseconds a cancelled task has to return before its worker is terminated; default 5000. */
  cancelGraceMs?: number;
}

/** Seconds a non-bash task may run before the host gives up on it and frees its worker. */
const TASK_TIMEOUT_S = 120;

/** Tools whose time limit is `tools.searchLimits.timeout`, enforced by ending their worker. */
const SEARCH_TOOLS = new Set(['grep', 'glob']);

const searchTimeout = (tool: string, seconds: number): string =>
  `${tool} ran longer than ${seconds}s, the tools.searchLimits.timeout limit, and was stopped. ` +
  (tool === 'grep'
    ? 'The pattern may backtrack without end (nested quantifiers with a backreference or ' +
      'lookaround, such as ^(a+)+\\1$): simplify it, or search a narrower path or glob.'
    : 'Search a narrower path, or use a simpler pattern.');

const unsandboxedNote = (reason: string): string =>
  `note: bash is not sandboxed (${reason}); commands can write outside the workspace, read your ` +
  'secrets and use the network. Install bubblewrap (apt install bubblewrap) to sandbox them, ' +
  'or set tools.bash.sandbox: off to say so and silence this note';

/**
 * Owns the piscina pool that runs the built-in tools. `run` never throws: failures, timeouts and
 * cancellation come back as `ToolResult`s. Cancelling a task ends every process group it started;
 * a worker that does not return in time is terminated.
 */
export class ToolsHost {
  #poolNow: Piscina<ToolTask, ToolResult> | undefined;
  readonly #maxThreads: number;
  #context: Omit<ToolContext, 'todoFile'>;
  readonly #sessionsDir: string;
  #disabled: Set<string>;
  readonly #groups = new Set<number>();
  readonly #running = new Set<Promise<ToolResult>>();
  readonly #cancelGraceMs: number;
  readonly #root: string;
  readonly #env: Env;
  readonly #outputsDir: string;
  #tools: Config['tools'];
  #bwrap: Promise<BwrapProbe> | undefined;
  #noted = false;

  constructor(options: ToolsHostOptions) {
    this.#env = options.env ?? process.env;
    this.#root = options.root;
    const paths = nifflerPaths(options.root, this.#env);
    this.#sessionsDir = paths.sessionsDir;
    this.#outputsDir = paths.outputsDir;
    this.#cancelGraceMs = options.cancelGraceMs ?? 5000;
    this.#maxThreads = options.maxThreads ?? 4;
    this.#tools = options.tools;
    [this.#context, this.#disabled] = this.#settings(options.tools);
  }

  /**
   * The pool, started by the first call: listing the tools needs no thread, and an idle daemon
   * keeps none (a pool thread is a V8 isolate, ~25 MiB) until a tool runs.
   */
  get #pool(): Piscina<ToolTask, ToolResult> {
    // Tools start child processes: with sync atomics an idle worker parks in Atomics.wait and
    // freezes async work still running in it.
    this.#poolNow ??= new Piscina<ToolTask, ToolResult>({
      filename: workerFile('tools').href,
      execArgv: workerExecArgv(),
      atomics: 'disabled',
      minThreads: 1,
      maxThreads: this.#maxThreads,
      idleTimeout: 60_000,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    return this.#poolNow;
  }

  /**
   * Applies a reloaded `tools` section: limits, allowed paths and disabled tools hold for every
   * call from now on (calls already running keep what they started with). The pool stays.
   */
  configure(tools: Config['tools']): void {
    this.#tools = tools;
    [this.#context, this.#disabled] = this.#settings(tools);
  }

  #settings(tools: Config['tools']): [Omit<ToolContext, 'todoFile'>, Set<string>] {
    const context: Omit<ToolContext, 'todoFile'> = {
      root: this.#root,
      allowedPaths: tools.allowedPaths.map((dir) =>
        path.resolve(this.#root, expandHome(dir, this.#env)),
      ),
      // No tool reaches niffler's own files (trust, sessions, auth) but the outputs it saved.
      excluded: [nifflerPaths(this.#root, this.#env).home],
      outputsDir: this.#outputsDir,
      limits: {
        maxChars: tools.output.maxChars,
        maxFileBytes: tools.output.maxFileBytes,
        bashTimeout: tools.bash.timeout,
        bashMaxTimeout: tools.bash.maxTimeout,
        searchMaxFiles: tools.searchLimits.maxFiles,
        searchMaxBytes: tools.searchLimits.maxBytes,
      },
      bash: {
        sandbox: tools.bash.sandbox,
        network: tools.bash.network,
        limits: tools.bash.limits,
        passEnv: tools.bash.passEnv,
        hide: hiddenFromSandbox(this.#env),
      },
      fetch: { allowPrivate: tools.fetch.allowPrivate },
    };
    return [context, new Set(tools.disabled)];
  }

  /**
   * The context of one call. bash's gets bubblewrap as tried once for the pool, and — on the
   * first call that runs unsandboxed in `auto` — the note saying so; fetch's gets its grants.
   */
  async #contextFor(call: ToolCall): Promise<ToolContext> {
    const context: ToolContext = { ...this.#context, todoFile: this.#todoFile(call.sessionId) };
    if (call.grants) context.fetch = { ...context.fetch, granted: call.grants };
    if (call.grants?.includes(GIT_WRITE)) context.bash = { ...context.bash, gitWritable: true };
    if (call.name !== 'bash' || context.bash.sandbox === 'off') return context;
    const bwrap = await (this.#bwrap ??= probeBwrap(this.#env['PATH'] ?? ''));
    const note =
      !bwrap.ok && context.bash.sandbox === 'auto' && !this.#noted
        ? unsandboxedNote(bwrap.reason)
        : undefined;
    if (note) this.#noted = true;
    return { ...context, bash: { ...context.bash, bwrap, ...(note ? { note } : {}) } };
  }

  /** Every built-in tool (which of them a consumer is offered is the capabilities module's call). */
  definitions(): ToolDefinition[] {
    return [...builtinTools()];
  }

  /**
   * Runs one call in the pool. Aborting `signal` resolves at once to a `canceled` result: the task
   * is told to cancel (it ends its process groups); if its worker does not return within a grace
   * period, the worker is terminated and the groups it reported are killed from here.
   */
  async run(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    if (!isBuiltinTool(call.name))
      return fail('invalid-args', `${call.name} is not a built-in tool`);
    if (this.#disabled.has(call.name))
      return fail('denied', `${call.name} is disabled by tools.disabled in the config`);
    if (signal.aborted) return fail('canceled', `${call.name} was canceled before it started`);
    // Validated here, where the schemas are loaded anyway: the pool's threads load none.
    const parsed = parseToolArgs(call.name, call.args);
    if (!parsed.ok) return parsed.result;
    const context = await this.#contextFor(call);
    return this.#runTask(call.name, parsed.args, context, this.#secondsFor(call.name), signal);
  }

  /**
   * Runs a command for niffler itself (a hook, a repository tool, a `` !`cmd` ``) in the pool, as
   * bash runs: same sandbox, limits and minimal environment; never throws.
   */
  async runCommand(spec: CommandSpec, signal: AbortSignal): Promise<CommandOutcome | ToolResult> {
    if (signal.aborted) return fail('canceled', 'the command was canceled before it started');
    const context = await this.#contextFor({ name: 'bash', args: {} });
    const result = await this.#runTask(
      COMMAND_TASK,
      spec,
      context,
      spec.timeoutSeconds + 30,
      signal,
    );
    return result.ok && result.data ? (result.data as unknown as CommandOutcome) : result;
  }

  /** One task in the pool, cancelled with `signal`, stopped after `seconds`. */
  async #runTask(
    name: string,
    args: unknown,
    context: ToolContext,
    seconds: number,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    const call = { name };
    const isSearch = SEARCH_TOOLS.has(name);
    const terminate = new AbortController();
    const { port1, port2 } = new MessageChannel();
    const endStarted = this.#watchGroups(port1, terminate.signal);
    const task: ToolTask = { tool: name, args, context, port: port2 };
    const running = this.#pool
      .run(task, { signal: terminate.signal, transferList: [port2] })
      .catch((error: unknown): ToolResult => {
        if (terminate.signal.aborted) return fail('canceled', `${call.name} was stopped`);
        const message = error instanceof Error ? error.message : String(error);
        return fail('internal', `${call.name}: the tools worker failed: ${message}`);
      })
      .finally(() => {
        // A terminated worker could not end its groups. Its side of the port closes when the
        // thread is gone, so a late `spawned` still arrives and is ended by the handler above.
        if (terminate.signal.aborted) endStarted();
        else port1.close();
        this.#running.delete(running);
      });
    this.#running.add(running);
    let stop: (result: ToolResult) => void = () => undefined;
    const stopped = new Promise<ToolResult>((resolve) => {
      stop = (result) => {
        port1.postMessage({ type: 'cancel' } satisfies ToolControlMessage);
        const grace = setTimeout(() => terminate.abort(), this.#cancelGraceMs);
        grace.unref();
        void running.finally(() => clearTimeout(grace));
        resolve(result);
      };
    });
    const onAbort = () => stop(fail('canceled', `${call.name} was canceled`));
    // Also when it aborted while the context was made (bash waits for the bwrap probe).
    const offAbort = whenAborted(signal, onAbort);
    const deadline = setTimeout(() => {
      if (!isSearch)
        return stop(
          fail('timeout', `${call.name} did not finish within ${seconds}s and was stopped`),
        );
      // A search over its limit is most likely stuck in one regular expression: its worker
      // cannot read a cancel message, so it is ended at once and the pool starts another.
      stop(fail('timeout', searchTimeout(call.name, seconds)));
      terminate.abort();
    }, seconds * 1000);
    try {
      return await Promise.race([running, stopped]);
    } finally {
      offAbort();
      clearTimeout(deadline);
    }
  }

  /** Seconds a task of `tool` may run before the host stops it. */
  #secondsFor(tool: string): number {
    if (tool === 'bash') return this.#context.limits.bashMaxTimeout + 30;
    return SEARCH_TOOLS.has(tool) ? this.#tools.searchLimits.timeout : TASK_TIMEOUT_S;
  }

  /**
   * Keeps the process groups a task reports on `port`; a group reported after `terminated` is
   * ended at once. Returns what ends the groups still running.
   */
  #watchGroups(port: MessagePort, terminated: AbortSignal): () => void {
    const started = new Set<number>();
    port.on('message', (message: ToolPortMessage) => {
      if (message.type === 'spawned') {
        started.add(message.pid);
        this.#groups.add(message.pid);
        if (terminated.aborted) this.#endGroup(message.pid);
      } else {
        started.delete(message.pid);
        this.#groups.delete(message.pid);
      }
    });
    port.unref();
    return () => started.forEach((pid) => this.#endGroup(pid));
  }

  /** Resolves when every task has returned, including cancelled ones still ending processes. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Ends every process group still running and closes the pool. */
  async close(): Promise<void> {
    this.#groups.forEach((pid) => this.#endGroup(pid));
    await this.#poolNow?.destroy();
  }

  #endGroup(pid: number): void {
    this.#groups.delete(pid);
    killGroup(pid, 'SIGKILL');
  }

  #todoFile(sessionId = 'default'): string {
    const safe = sessionId.replace(/[^a-zA-Z0-9._-]/g, '_').slice(0, 100) || 'default';
    return path.join(this.#sessionsDir, `${safe}.todo.json`);
  }
}
