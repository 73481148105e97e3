import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from '../config/schema.ts';
import { nifflerPaths, type Env } from '../paths.ts';
import {
  BUILTIN_TOOLS,
  isBuiltinTool,
  type ToolContext,
  type ToolDefinition,
  type ToolPortMessage,
  type ToolTask,
} from '../../workers/protocol/tools.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
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
}

/** Seconds a non-bash task may run before the host gives up on it and frees its worker. */
const TASK_TIMEOUT_S = 120;

const expandHome = (dir: string, env: Env): string =>
  dir === '~' || dir.startsWith('~/') ? path.join(env['HOME'] ?? '/', dir.slice(1)) : dir;

const isAbort = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');

/**
 * Owns the piscina pool that runs the built-in tools. `run` never throws: failures, timeouts and
 * cancellation come back as `ToolResult`s. Cancelling a running task ends its worker thread and
 * every process group the task started.
 */
export class ToolsHost {
  readonly #pool: Piscina<ToolTask, ToolResult>;
  readonly #context: Omit<ToolContext, 'todoFile'>;
  readonly #sessionsDir: string;
  readonly #disabled: Set<string>;
  readonly #groups = new Set<number>();

  constructor(options: ToolsHostOptions) {
    const env = options.env ?? process.env;
    const paths = nifflerPaths(options.root, env);
    const { tools } = options;
    this.#sessionsDir = paths.sessionsDir;
    this.#disabled = new Set(tools.disabled);
    this.#context = {
      root: options.root,
      allowedPaths: tools.allowedPaths.map((dir) =>
        path.resolve(options.root, expandHome(dir, env)),
      ),
      outputsDir: paths.outputsDir,
      limits: {
        maxChars: tools.output.maxChars,
        maxFileBytes: tools.output.maxFileBytes,
        bashTimeout: tools.bash.timeout,
        bashMaxTimeout: tools.bash.maxTimeout,
      },
    };
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

  /** The enabled built-in tools, as offered to the model. */
  definitions(): ToolDefinition[] {
    return BUILTIN_TOOLS.filter((tool) => !this.#disabled.has(tool.name));
  }

  /** True when `name` is an enabled built-in tool. */
  has(name: string): boolean {
    return isBuiltinTool(name) && !this.#disabled.has(name);
  }

  /** Runs one call in the pool. Aborting `signal` resolves to a `canceled` result. */
  async run(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    if (!isBuiltinTool(call.name))
      return fail('invalid-args', `${call.name} is not a built-in tool`);
    if (this.#disabled.has(call.name))
      return fail('denied', `${call.name} is disabled by tools.disabled in the config`);
    if (signal.aborted) return fail('canceled', `${call.name} was canceled before it started`);
    const { limits } = this.#context;
    const seconds = call.name === 'bash' ? limits.bashMaxTimeout + 30 : TASK_TIMEOUT_S;
    const deadline = AbortSignal.timeout(seconds * 1000);
    const combined = AbortSignal.any([signal, deadline]);
    const { port1, port2 } = new MessageChannel();
    const started = new Set<number>();
    const endGroups = () => started.forEach((pid) => this.#endGroup(pid));
    port1.on('message', (message: ToolPortMessage) => {
      if (message.type === 'spawned') {
        started.add(message.pid);
        this.#groups.add(message.pid);
        // The task may have been cancelled before this message arrived.
        if (combined.aborted) this.#endGroup(message.pid);
      } else {
        started.delete(message.pid);
        this.#groups.delete(message.pid);
      }
    });
    port1.once('close', () => port1.removeAllListeners('message'));
    port1.unref();
    combined.addEventListener('abort', endGroups, { once: true });
    const task: ToolTask = {
      tool: call.name,
      args: call.args,
      context: { ...this.#context, todoFile: this.#todoFile(call.sessionId) },
      port: port2,
    };
    try {
      return await this.#pool.run(task, { signal: combined, transferList: [port2] });
    } catch (error) {
      if (signal.aborted) return fail('canceled', `${call.name} was canceled`);
      if (deadline.aborted || isAbort(error))
        return fail('timeout', `${call.name} did not finish within ${seconds}s and was stopped`);
      const message = error instanceof Error ? error.message : String(error);
      return fail('internal', `${call.name}: the tools worker failed: ${message}`);
    } finally {
      combined.removeEventListener('abort', endGroups);
      // After a cancel, keep listening until the worker's side closes: a late `spawned` still
      // has its group ended.
      if (!combined.aborted) port1.close();
    }
  }

  /** Ends every process group still running and closes the pool. */
  async close(): Promise<void> {
    this.#groups.forEach((pid) => this.#endGroup(pid));
    await this.#pool.destroy();
  }

  #endGroup(pid: number): void {
    this.#groups.delete(pid);
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // ESRCH: the group has already exited.
    }
  }

  #todoFile(sessionId = 'default'): string {
    const safe = sessionId.replace(/[^a-zA-Z0-9._-]/g, '_').slice(0, 100) || 'default';
    return path.join(this.#sessionsDir, `${safe}.todo.json`);
  }
}

const fail = (code: Extract<ToolResult, { ok: false }>['error']['code'], message: string) =>
  ({ ok: false, error: { code, message } }) as const satisfies ToolResult;
