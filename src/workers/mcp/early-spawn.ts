import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { McpWorkerData } from '../protocol/mcp.ts';
import { killGroup } from '../shared/process-group.ts';
import { parentDeathWrapper } from '../shared/parent-death.ts';
import { serverLaunch } from './server-launch.ts';
import { mark } from '../shared/timeline.ts';

// A cold start waits for its servers, and a server process takes longer to boot than the MCP
// client code takes to load. So the worker's entry spawns the stdio servers that start with the
// workspace (startable, autoStart) as soon as it has its data, before it loads the SDK; the first
// ProcessTransport that would spawn the very same process (command, arguments, directory,
// environment) takes the running one over instead. Until then nothing reads the child's output:
// it waits in the pipes. This module loads none of the MCP client code.

/** How long a spawned-early process waits to be taken over before it is ended. */
const UNCLAIMED_MS = 30_000;

interface Early {
  child: ChildProcess;
  /** Set once the process has exited (or failed to spawn): then it is not handed over. */
  gone: boolean;
  markGone: () => void;
}

/** The processes spawned early, by their launch (see `launchKey`). Per thread. */
const early = new Map<string, Early>();

const launchKey = (argv: readonly string[], cwd: string, env: Record<string, string>): string =>
  JSON.stringify([argv, cwd, env]);

/** Spawns a server process as every stdio server is spawned: its own process group, three pipes. */
export const spawnServerProcess = (
  argv: readonly string[],
  cwd: string,
  env: Record<string, string>,
): ChildProcess => {
  const [command, ...args] = argv as [string, ...string[]];
  return spawn(command, args, {
    cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    shell: false,
    windowsHide: true,
  });
};

/** The argv a stdio server is spawned with: its command under the parent-death wrapper. */
export const serverArgv = (
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string>,
): string[] => parentDeathWrapper([command, ...args], env['PATH'], cwd);

/**
 * Spawns, now, the stdio servers of `data` that the worker starts by itself. A server whose launch
 * cannot be worked out here (a sandbox bwrap cannot provide, say) is left to its normal start,
 * which reports why.
 */
export const spawnEarly = (data: McpWorkerData): void => {
  for (const spec of data.servers) {
    if (spec.transport !== 'stdio' || !spec.command) continue;
    if (spec.gate !== 'startable' || !spec.autoStart) continue;
    try {
      const cwd = path.resolve(data.root, spec.workingDir ?? '.');
      const launch = serverLaunch({ ...spec, command: spec.command }, cwd, () => {});
      const argv = serverArgv(launch.file, launch.args, cwd, launch.env);
      const child = spawnServerProcess(argv, cwd, launch.env);
      const entry: Early = { child, gone: false, markGone: () => (entry.gone = true) };
      child.once('error', entry.markGone);
      child.once('exit', entry.markGone);
      early.set(launchKey(argv, cwd, launch.env), entry);
      if (early.size === 1) mark('first server spawned');
    } catch {
      // Its normal start tries again and says what went wrong.
    }
  }
  if (early.size === 0) return;
  setTimeout(endUnclaimed, UNCLAIMED_MS).unref();
  process.once('exit', endUnclaimed);
};

/**
 * The process spawned early for exactly this launch, if one runs: it is handed over once (its
 * spawn has happened, and no event but its output and its end is still to come).
 */
export const takeEarlySpawn = (
  argv: readonly string[],
  cwd: string,
  env: Record<string, string>,
): ChildProcess | undefined => {
  const key = launchKey(argv, cwd, env);
  const entry = early.get(key);
  if (!entry) return undefined;
  early.delete(key);
  if (entry.gone || entry.child.pid === undefined) {
    endGroup(entry.child);
    return undefined;
  }
  entry.child.off('error', entry.markGone);
  entry.child.off('exit', entry.markGone);
  return entry.child;
};

/** Ends what no transport took over (the config changed meanwhile, the thread is ending). */
const endUnclaimed = (): void => {
  for (const { child } of early.values()) endGroup(child);
  early.clear();
};

const endGroup = (child: ChildProcess): void => {
  if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
};
