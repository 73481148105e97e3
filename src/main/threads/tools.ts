import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from '../config/schema.ts';
import { nifflerPaths, type Env } from '../paths.ts';
import {
  builtinTools,
  isBuiltinTool,
  type ToolContext,
  type ToolControlMessage,
  type ToolDefinition,
  type ToolPortMessage,
  type ToolTask,
} from '../../workers/protocol/tools.ts';
import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import { killGroup } from '../../workers/shared/process-group.ts';
import { workerExecArgv, workerFile } from './entry.ts';

/** One built-in tool call from the agent loop. `sessionId` picks the session's todo list. */
export interface ToolCall {
  name: string;
  args: unknown;
  sessionId?: string;
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

const expandHome = (dir: string, env: Env): string =>
  dir === '~' || dir.startsWith('~/') ? path.join(env['HOME'] ?? '/', dir.slice(1)) : dir;

/**
 * Owns the piscina pool that runs the built-in tools. `run` never throws: failures, timeouts and
 * cancellation come back as `ToolResult`s. Cancelling a task ends every process group it started;
 * a worker that does not return in time is terminated.
 */
export class ToolsHost {
  readonly #pool: Piscina<ToolTask, ToolResult>;
  #context: Omit<ToolContext, 'todoFile'>;
  readonly #sessionsDir: string;
  #disabled: Set<string>;
  readonly #groups = new Set<number>();
  readonly #running = new Set<Promise<ToolResult>>();
  readonly #cancelGraceMs: number;
  readonly #root: string;
  readonly #env: Env;
  readonly #outputsDir: string;

  constructor(options: ToolsHostOptions) {
    this.#env = options.env ?? process.env;
    this.#root = options.root;
    const paths = nifflerPaths(options.root, this.#env);
    this.#sessionsDir = paths.sessionsDir;
    this.#outputsDir = paths.outputsDir;
    this.#cancelGraceMs = options.cancelGraceMs ?? 5000;
    [this.#context, this.#disabled] = this.#settings(options.tools);
    // Tools start child processes: with sync atomics an idle worker parks in Atomics.wait and
    // freezes async work still running in it.
    this.#pool = new Piscina<ToolTask, ToolResult>({
      filename: workerFile('tools').href,
      execArgv: workerExecArgv(),
      atomics: 'disabled',
      minThreads: 1,
      maxThreads: options.maxThreads ?? 4,
      idleTimeout: 60_000,
    });
  }

  /**
   * Applies a reloaded `tools` section: limits, allowed paths and disabled tools hold for every
   * call from now on (calls already running keep what they started with). The pool stays.
   */
  configure(tools: Config['tools']): void {
    [this.#context, this.#disabled] = this.#settings(tools);
  }

  #settings(tools: Config['tools']): [Omit<ToolContext, 'todoFile'>, Set<string>] {
    const context = {
      root: this.#root,
      allowedPaths: tools.allowedPaths.map((dir) =>
        path.resolve(this.#root, expandHome(dir, this.#env)),
      ),
      outputsDir: this.#outputsDir,
      limits: {
        maxChars: tools.output.maxChars,
        maxFileBytes: tools.output.maxFileBytes,
        bashTimeout: tools.bash.timeout,
        bashMaxTimeout: tools.bash.maxTimeout,
      },
    };
    return [context, new Set(tools.disabled)];
  }

  /** The enabled built-in tools, as offered to the model. */
  definitions(): ToolDefinition[] {
    return builtinTools().filter((tool) => !this.#disabled.has(tool.name));
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
    const { limits } = this.#context;
    const seconds = call.name === 'bash' ? limits.bashMaxTimeout + 30 : TASK_TIMEOUT_S;
    const terminate = new AbortController();
    const { port1, port2 } = new MessageChannel();
    const started = new Set<number>();
    const endStarted = () => started.forEach((pid) => this.#endGroup(pid));
    port1.on('message', (message: ToolPortMessage) => {
      if (message.type === 'spawned') {
        started.add(message.pid);
        this.#groups.add(message.pid);
        if (terminate.signal.aborted) this.#endGroup(message.pid);
      } else {
        started.delete(message.pid);
        this.#groups.delete(message.pid);
      }
    });
    port1.unref();
    const task: ToolTask = {
      tool: call.name,
      args: call.args,
      context: { ...this.#context, todoFile: this.#todoFile(call.sessionId) },
      port: port2,
    };
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
    signal.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(
      () => stop(fail('timeout', `${call.name} did not finish within ${seconds}s and was stopped`)),
      seconds * 1000,
    );
    try {
      return await Promise.race([running, stopped]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(deadline);
    }
  }

  /** Resolves when every task has returned, including cancelled ones still ending processes. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Ends every process group still running and closes the pool. */
  async close(): Promise<void> {
    this.#groups.forEach((pid) => this.#endGroup(pid));
    await this.#pool.destroy();
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
