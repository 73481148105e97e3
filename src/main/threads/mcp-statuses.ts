import { NifflerError } from '../errors.ts';
import type { McpServerSpec, McpServerStatus } from '../../workers/protocol/mcp.ts';
import { whenAborted } from '../../workers/shared/abort.ts';
import { killGroup } from '../../workers/shared/process-group.ts';
import type { McpHostEvent } from './mcp-types.ts';

// The MCP servers' statuses as the host last heard them from its worker, and the process groups
// of the servers it reported, which the host ends itself when the worker died or hung.

export class ServerStatuses {
  readonly #statuses = new Map<string, McpServerStatus>();
  readonly #pids = new Map<string, number>();
  /** The worker is still loading its client code (see `early`): its statuses are answered here. */
  #early = false;

  /** A status the worker reported. */
  note(status: McpServerStatus): void {
    this.#statuses.set(status.name, status);
    if (status.pid !== null) this.#pids.set(status.name, status.pid);
    else this.#pids.delete(status.name);
  }

  /**
   * A worker that is loading its client code said `ready` with every server's state: until it
   * says `serving`, its thread is held by that loading, and `status` is answered here from these
   * and the status events after them — what the worker would answer, without the wait.
   */
  early(statuses: McpServerStatus[] | undefined): void {
    this.#early = statuses !== undefined;
    for (const status of statuses ?? []) this.note(status);
  }

  /** The worker's manager answers from now on. */
  serving(): void {
    this.#early = false;
  }

  /** Every server's status in `servers`' order, while the worker is early; else undefined. */
  answer(servers: McpServerSpec[]): McpServerStatus[] | undefined {
    if (!this.#early) return undefined;
    const statuses = servers.map((spec) => this.#statuses.get(spec.name));
    return statuses.every((s) => s !== undefined) ? statuses : undefined;
  }

  get(server: string): McpServerStatus | undefined {
    return this.#statuses.get(server);
  }

  all(): McpServerStatus[] {
    return [...this.#statuses.values()];
  }

  /** Forgets the servers no longer among `servers` (a config reload). */
  keepOnly(servers: McpServerSpec[]): void {
    for (const name of this.#statuses.keys())
      if (!servers.some((s) => s.name === name)) this.#statuses.delete(name);
  }

  /** Ends the process groups of servers the worker reported (for a worker that died or hung). */
  killServers(signal: NodeJS.Signals): void {
    // A group already gone is the normal case after a clean shutdown.
    for (const pid of this.#pids.values()) killGroup(pid, signal);
    this.#pids.clear();
  }
}

/** Statuses with how each server's process is confined (from its spec). */
export const withConfinement = (
  statuses: McpServerStatus[],
  servers: McpServerSpec[],
): McpServerStatus[] =>
  statuses.map((status) => {
    const spec = servers.find((s) => s.name === status.name);
    return {
      ...status,
      ...(spec?.sandbox ? { sandbox: 'bwrap' as const } : {}),
      ...(spec?.limits ? { limits: spec.limits } : {}),
    };
  });

/**
 * Resolves with the first status of `server` that satisfies `test` (`current` counts), heard
 * through `on`; rejects when `signal` aborts.
 */
export const statusWhen = (
  current: McpServerStatus | undefined,
  on: (listener: (event: McpHostEvent) => void) => () => void,
  server: string,
  test: (status: McpServerStatus) => boolean,
  signal?: AbortSignal,
): Promise<McpServerStatus> => {
  if (current && test(current)) return Promise.resolve(current);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      off();
      reject(new NifflerError('canceled', `stopped waiting for server "${server}"`));
    };
    const off = on((event) => {
      if (event.type !== 'status' || event.status.name !== server || !test(event.status)) return;
      off();
      offAbort();
      resolve(event.status);
    });
    const offAbort = whenAborted(signal, onAbort);
  });
};
