import os from 'node:os';
import path from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
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
import { sessionEnvFile } from './session-env.ts';
import { WORKER_YOUNG_GENERATION_MB, workerExecArgv, workerFile } from './entry.ts';
import { whenAborted } from '../../workers/shared/abort.ts';
import { SearchRelay } from './search-pool.ts';

/**
 * One built-in tool call from the agent loop. `sessionId` picks the session's todo list;
 * `grants` are what the user allowed for this call when asked (a private address for fetch);
 * `readOnlyPaths` what the session may read besides (its active skills of yours).
 */
interface ToolCall {
  name: string;
  args: unknown;
  sessionId?: string;
  grants?: string[];
  readOnlyPaths?: string[];
}

interface ToolsHostOptions {
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

/**
 * Tools whose task leads a search: it asks for its chunks on its port, and they run here as tasks
 * of their own on the pool's other threads.
 */
const SEARCH_TOOLS = new Set(['grep', 'glob']);

type Progress = (progress: { progress: number; total?: number; message?: string }) => void;

/** Milliseconds one file may hold a search's thread: a quarter of its time, at most 5 s. */
const fileMs = (seconds: number): number => Math.min(5000, Math.max(500, (seconds * 1000) / 4));

const stuckMessage = (tool: string, file: string, ms: number): string =>
  `${tool} was stopped: the pattern ran for more than ${ms / 1000}s on ${file} without getting ` +
  'further. It may backtrack without end (nested quantifiers with a backreference or ' +
  'lookaround, such as ^(a+)+\\1$): simplify it, or leave that file out with glob "!name".';

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
  #poolNow: Promise<Piscina<ToolTask, ToolResult>> | undefined;
  readonly #maxThreads: number;
  #context: Omit<ToolContext, 'todoFile'>;
  readonly #sessionsDir: string;
  #disabled: Set<string>;
  readonly #groups = new Set<number>();
  /** Searches running whose chunks run on other threads (see #searchThreads). */
  #leads = 0;
  readonly #running = new Set<Promise<ToolResult>>();
  readonly #cancelGraceMs: number;
  readonly #root: string;
  readonly #env: Env;
  readonly #outputsDir: string;
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
    [this.#context, this.#disabled] = this.#settings(options.tools);
  }

  /**
   * The pool, started by the first call: listing the tools needs no thread, and an idle daemon
   * keeps none (a pool thread is a V8 isolate, ~25 MiB) until a tool runs. Piscina's code too
   * loads then (~22 ms of this thread, which a cold daemon would spend before it listens).
   */
  #pool(): Promise<Piscina<ToolTask, ToolResult>> {
    // Tools start child processes: with sync atomics an idle worker parks in Atomics.wait and
    // freezes async work still running in it.
    this.#poolNow ??= import('piscina').then(
      ({ Piscina }) =>
        new Piscina<ToolTask, ToolResult>({
          filename: workerFile('tools').href,
          execArgv: workerExecArgv(),
          atomics: 'disabled',
          minThreads: 1,
          maxThreads: this.#maxThreads,
          idleTimeout: 60_000,
          resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
        }),
    );
    return this.#poolNow;
  }

  /**
   * Applies a reloaded `tools` section: limits, allowed paths and disabled tools hold for every
   * call from now on (calls already running keep what they started with). The pool stays.
   */
  configure(tools: Config['tools']): void {
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
        searchSeconds: tools.searchLimits.timeout,
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
    if (call.readOnlyPaths?.length) context.readOnlyPaths = call.readOnlyPaths;
    if (call.grants) context.fetch = { ...context.fetch, granted: call.grants };
    if (call.grants?.includes(GIT_WRITE)) context.bash = { ...context.bash, gitWritable: true };
    const envFile = call.name === 'bash' ? sessionEnvFile(call.sessionId) : undefined;
    if (envFile) context.bash = { ...context.bash, envFile };
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
  async run(call: ToolCall, signal: AbortSignal, onProgress?: Progress): Promise<ToolResult> {
    if (!isBuiltinTool(call.name))
      return fail('invalid-args', `${call.name} is not a built-in tool`);
    if (this.#disabled.has(call.name))
      return fail('denied', `${call.name} is disabled by tools.disabled in the config`);
    if (signal.aborted) return fail('canceled', `${call.name} was canceled before it started`);
    // Validated here, where the schemas are loaded anyway: the pool's threads load none.
    const parsed = parseToolArgs(call.name, call.args);
    if (!parsed.ok) return parsed.result;
    const context = await this.#contextFor(call);
    const search = SEARCH_TOOLS.has(call.name) ? { onProgress } : undefined;
    const seconds = this.#secondsFor(call.name);
    return this.#runTask(call.name, parsed.args, context, seconds, signal, search);
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

  /**
   * One task in the pool, cancelled with `signal`, stopped after `seconds`. A search's task
   * (`search`) leads it: the chunks it asks for run as tasks of their own, progress is passed on.
   */
  async #runTask(
    name: string,
    args: unknown,
    context: ToolContext,
    seconds: number,
    signal: AbortSignal,
    search?: { onProgress: Progress | undefined },
  ): Promise<ToolResult> {
    const call = { name };
    const terminate = new AbortController();
    const { port1, port2 } = new MessageChannel();
    let onStuck = (_file: string) => {};
    const task: ToolTask = { tool: name, args, context, port: port2 };
    const lead = search && this.#lead(task, port1, search.onProgress, (file) => onStuck(file));
    const endStarted = this.#watchGroups(port1, terminate.signal, lead?.relay);
    const running = this.#pool()
      .then((pool) => pool.run(task, { signal: terminate.signal, transferList: [port2] }))
      .then((result) => lead?.finished(result) ?? result)
      .catch((error: unknown): ToolResult => {
        if (terminate.signal.aborted) return fail('canceled', `${call.name} was stopped`);
        const message = error instanceof Error ? error.message : String(error);
        return fail('internal', `${call.name}: the tools worker failed: ${message}`);
      })
      .finally(() => {
        // A terminated worker could not end its groups. Its side of the port closes when the
        // thread is gone, so a late `spawned` still arrives and is ended by the handler above.
        lead?.end();
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
    onStuck = (file) => {
      stop(fail('timeout', stuckMessage(call.name, file, fileMs(context.limits.searchSeconds))));
      terminate.abort();
    };
    const onAbort = () => stop(fail('canceled', `${call.name} was canceled`));
    // Also when it aborted while the context was made (bash waits for the bwrap probe).
    const offAbort = whenAborted(signal, onAbort);
    const deadline = setTimeout(
      () => stop(fail('timeout', `${call.name} did not finish within ${seconds}s and was stopped`)),
      seconds * 1000,
    );
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
    // A search answers at its own time budget; this only ends one that could not.
    if (SEARCH_TOOLS.has(tool)) return this.#context.limits.searchSeconds + 30;
    return TASK_TIMEOUT_S;
  }

  /**
   * Threads a new search's chunks may run on besides its lead's: the machine's cores, within the
   * pool's size less the leads running — so that leads, which wait for their chunks, can never
   * hold every thread. 0: the search runs in its lead's thread alone.
   */
  #searchThreads(): number {
    const free = this.#maxThreads - 1 - this.#leads;
    return Math.max(0, Math.min(free, os.availableParallelism()));
  }

  /**
   * Makes `task` a search's lead: its asks on `port` answered by a relay running its chunks on
   * the pool (`searchThreads` of them at once, when there are threads to spare).
   */
  #lead(
    task: ToolTask,
    port: MessagePort,
    onProgress: Progress | undefined,
    onStuck: (file: string) => void,
  ): { relay: SearchRelay; finished: (result: ToolResult) => ToolResult; end: () => void } {
    const runTask = (chunk: ToolTask, end: AbortSignal) =>
      this.#pool().then((pool) => pool.run(chunk, { signal: end }));
    const ms = fileMs(task.context.limits.searchSeconds);
    const relay = new SearchRelay(runTask, task.context, port, ms, onProgress, onStuck);
    const helpers = this.#searchThreads();
    if (helpers > 0) {
      task.searchThreads = helpers;
      this.#leads++;
    }
    return {
      relay,
      finished: (result) => {
        relay.finish(result);
        return result;
      },
      end: () => {
        if (helpers > 0) this.#leads--;
        relay.close();
      },
    };
  }

  /**
   * Keeps the process groups a task reports on `port`; a group reported after `terminated` is
   * ended at once; a search's asks go to its `relay`. Returns what ends the groups still running.
   */
  #watchGroups(port: MessagePort, terminated: AbortSignal, relay?: SearchRelay): () => void {
    const started = new Set<number>();
    port.on('message', (message: ToolPortMessage) => {
      if (message.type === 'spawned') {
        started.add(message.pid);
        this.#groups.add(message.pid);
        if (terminated.aborted) this.#endGroup(message.pid);
      } else if (message.type !== 'exited') {
        relay?.handle(message);
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
    await (await this.#poolNow)?.destroy();
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
