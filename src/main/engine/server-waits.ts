import type { McpServerStatus } from '../../workers/protocol/mcp.ts';
import { whenAborted } from '../../workers/shared/abort.ts';
import type { Config } from '../config/schema.ts';
import type { McpHost } from '../threads/mcp.ts';

/** What waiting for servers needs of the engine: the MCP worker's owner, the config, its start. */
export interface ServersView {
  readonly mcp: McpHost;
  readonly config: Config;
  readonly startedAt: number;
}

/**
 * What is left of `mcp.startupWait` counted from the daemon's start: a prompt waits at most that
 * for servers still starting. A cold `-p` (its daemon started for it) waits the rest of it; a
 * prompt to a daemon up for longer goes at once with the servers that are ready.
 */
export const startupWaitLeft = (engine: ServersView, now = Date.now()): number =>
  Math.max(0, engine.config.mcp.startupWait * 1000 - (now - engine.startedAt));

/**
 * `waitForServers` for a caller that needs no statuses, only the wait: named servers the host
 * last heard to be past starting (ready, failed, stopped…) take no round trip to the MCP worker —
 * the gateway asks this of a server before every prompt, resource and completion it forwards.
 */
export const serversSettled = async (
  engine: ServersView,
  names: string[] | undefined,
  signal?: AbortSignal,
  timeoutMs?: number,
): Promise<void> => {
  const known = engine.mcp.knownStatuses();
  const past = (name: string) => known.some((s) => s.name === name && s.state !== 'starting');
  if (names?.every(past)) return;
  await waitForServers(engine, names, signal, timeoutMs);
};

/**
 * Resolves once none of `names` (default: all) is `starting` — each server's own start-up timeout
 * bounds that — or when `signal` aborts, or after `timeoutMs` when given (with the statuses as
 * they then are). Driven by the worker's status events, no polling.
 */
export const waitForServers = async (
  engine: ServersView,
  names: string[] | undefined,
  signal?: AbortSignal,
  timeoutMs?: number,
): Promise<McpServerStatus[]> => {
  const pending = (all: McpServerStatus[]) =>
    all.filter((s) => (!names || names.includes(s.name)) && s.state === 'starting');
  let changed: () => void = () => {};
  const off = engine.mcp.on((event) => {
    if (event.type === 'status' || event.type === 'worker-exit') changed();
  });
  // One abort listener for the whole wait (not one more per status change).
  const onAbort = () => changed();
  const offAbort = whenAborted(signal, onAbort);
  let timedOut = false;
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          changed();
        }, timeoutMs);
  try {
    for (;;) {
      const next = new Promise<void>((resolve) => (changed = resolve));
      const all = await engine.mcp.status();
      if (pending(all).length === 0 || signal?.aborted || timedOut) return all;
      await next;
    }
  } finally {
    clearTimeout(timer);
    off();
    offAbort();
  }
};

/** The attempt a server starting (or waiting to start again) is at, counting from 1. */
const attemptOf = (status: McpServerStatus): number =>
  status.restarts + 1 + (status.nextRestartAt !== null ? 1 : 0);

/**
 * One line for each server whose tools a turn goes without (still starting, restarting, failed,
 * waiting for a login); servers stopped, disabled or untrusted on purpose are not named.
 */
export const leftOutNotices = (statuses: McpServerStatus[]): string[] =>
  statuses.flatMap((s) => {
    const out = 'its tools are not in this turn';
    const why = s.lastError?.message.split('\n')[0];
    switch (s.state) {
      case 'starting':
      case 'degraded':
        // Its tools kept from the last run are in the turn, and a call of one waits for it.
        if (s.state === 'starting' && s.catalog === 'kept') return [];
        return attemptOf(s) > 1 || s.state === 'degraded'
          ? [`server "${s.name}" is restarting (attempt ${attemptOf(s)}): ${out}`]
          : [`server "${s.name}" is still starting: ${out}`];
      case 'failed':
        return [
          `server "${s.name}" has failed${why ? ` (${why})` : ''}: ${out}; start it with niffler mcp start ${s.name}`,
        ];
      case 'needs-auth':
        return [`server "${s.name}" needs authorization: ${out}; run niffler mcp login ${s.name}`];
      default:
        return [];
    }
  });
