import { spawn, type ChildProcess } from 'node:child_process';
import type { LspServerSpec } from '../protocol/lsp.ts';
import { safeEnvironment } from '../shared/environment.ts';
import {
  forgetGroup,
  killGroup,
  processStartTime,
  recordGroup,
  selfAsOwner,
  waitGroupGone,
} from '../shared/process-group.ts';
import { inSandbox, probeBwrapSync, type Launch } from '../shared/sandbox-command.ts';
import { parentDeathWrapper } from '../shared/parent-death.ts';

/** How a server process ended. */
interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What a language server's process is spawned with, and where it is recorded while it runs. */
interface SpawnOptions {
  root: string;
  /** Where the process group is recorded (a daemon killed with -9 leaves nothing unreaped). */
  serversDir?: string;
  onStderr: (text: string) => void;
  onExit: (exit: ServerExit) => void;
}

/**
 * A language server's process: the leader of its own process group (so stopping it ends the
 * servers it starts — tsserver, for one), under `setpriv --pdeathsig` where the system has it,
 * recorded under the run directory while it runs, in bubblewrap when its entry asks.
 */
export class ServerProcess {
  readonly child: ChildProcess;
  exited: ServerExit | undefined;
  readonly #closed: Promise<void>;
  readonly #record: string | undefined;

  private constructor(child: ChildProcess, options: SpawnOptions, label: string) {
    this.child = child;
    this.#closed = new Promise((resolve) => child.once('close', () => resolve()));
    child.once('exit', (code, signal) => {
      this.exited = { code, signal };
      this.#forget();
      options.onExit(this.exited);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => options.onStderr(text));
    const pid = child.pid;
    if (pid !== undefined && options.serversDir) {
      const failed = recordGroup(options.serversDir, {
        pid,
        start: processStartTime(pid),
        label,
        owner: selfAsOwner(),
      });
      this.#record = failed ? undefined : options.serversDir;
    }
  }

  /** Spawns `spec`'s command; rejects when it cannot start (not found, not executable). */
  static spawn(spec: LspServerSpec, options: SpawnOptions): Promise<ServerProcess> {
    const launch = serverLaunch(spec, options.root);
    const env = safeEnvironment({ ...(spec.sandbox ? { TMPDIR: '/tmp' } : {}), ...spec.env });
    const argv = parentDeathWrapper([launch.file, ...launch.args], env['PATH'], options.root);
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.root,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      shell: false,
      windowsHide: true,
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => {
        child.off('error', reject);
        // A broken pipe on a server that died is its exit's business, not an uncaught error.
        child.stdin?.on('error', () => {});
        child.on('error', () => {});
        resolve(new ServerProcess(child, options, `lsp:${spec.name}`));
      });
    });
  }

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  /** SIGKILL to the whole group at once (a hung or flooding server, a crash's leftovers). */
  kill(): void {
    const pid = this.child.pid;
    if (pid !== undefined) killGroup(pid, 'SIGKILL');
  }

  /**
   * Ends the group: SIGTERM (after `exit` was asked for politely by the caller), SIGKILL after
   * `graceMs`, then waits until no process of the group runs.
   */
  async close(graceMs: number): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined) return;
    this.child.stdin?.end();
    if (!this.exited) {
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
      await this.#closed;
      clearTimeout(timer);
    }
    if (killGroup(pid, 'SIGKILL')) await waitGroupGone(pid, graceMs);
    this.#forget();
  }

  #forget(): void {
    const pid = this.child.pid;
    if (this.#record && pid !== undefined) forgetGroup(this.#record, pid);
  }
}

/**
 * The command of `spec`, in bubblewrap when it asks for a sandbox (a server that asks for one
 * where bwrap cannot run fails to start, saying why, rather than running unconfined).
 */
const serverLaunch = (spec: LspServerSpec, root: string): Launch => {
  const launch = { file: spec.command, args: spec.args };
  if (!spec.sandbox) return launch;
  const probe = probeBwrapSync();
  if (!probe.ok)
    throw new Error(
      `lsp.${spec.name}.sandbox is set, but ${probe.reason}; install bubblewrap ` +
        '(apt install bubblewrap), or remove the sandbox from its entry',
    );
  const read = [...(spec.sandbox.read ?? []), root];
  return inSandbox(launch, probe.path, { ...spec.sandbox, read }, root);
};
