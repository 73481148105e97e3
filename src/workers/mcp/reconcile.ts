import type { McpCalls, McpServerSpec, McpServerStatus } from '../protocol/mcp.ts';
import { ServerConnection } from './connection.ts';
import type { ConnectionContext } from './server-base.ts';

// A config reload reaching the MCP worker: the new set of specs laid over the connections, only
// what changed touched — a server gone stopped, a new one started (or announced), a changed one
// restarted when it ran, tracing and caching changed in place.

/** A stable text of a spec, to tell a changed definition from an unchanged one. */
const specKey = (spec: McpServerSpec): string =>
  JSON.stringify(spec, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)))
      : value,
  );

const isRunning = (state: McpServerStatus['state']) =>
  state === 'starting' ||
  state === 'ready' ||
  state === 'degraded' ||
  state === 'failed' ||
  state === 'needs-auth';

/**
 * Lays `specs` over `connections` (changed in place; new ones with `ctx`), `announce` told of a
 * new connection that does not start; resolves once the stops and restarts are done.
 */
export const reconcile = async (
  connections: Map<string, ServerConnection>,
  specs: McpServerSpec[],
  ctx: ConnectionContext,
  announce: (conn: ServerConnection) => void,
): Promise<McpCalls['update-servers']['result']> => {
  const result = {
    started: [] as string[],
    stopped: [] as string[],
    restarted: [] as string[],
    unchanged: [] as string[],
  };
  const next = new Map(specs.map((s) => [s.name, s]));
  const work: Promise<void>[] = [];
  for (const [name, conn] of connections)
    if (!next.has(name)) {
      result.stopped.push(name);
      connections.delete(name);
      work.push(conn.stop());
    }
  for (const spec of specs) {
    const conn = connections.get(spec.name);
    const wanted = spec.gate === 'startable';
    if (!conn) {
      const fresh = new ServerConnection(spec, ctx);
      connections.set(spec.name, fresh);
      if (wanted && spec.autoStart) {
        result.started.push(spec.name);
        void fresh.start(false);
      } else announce(fresh);
      continue;
    }
    if (specKey(conn.spec) === specKey(spec)) {
      result.unchanged.push(spec.name);
      continue;
    }
    if (specKey({ ...conn.spec, trace: spec.trace, cache: spec.cache }) === specKey(spec)) {
      // Tracing and caching change without a restart.
      conn.spec = spec;
      conn.updated();
      result.unchanged.push(spec.name);
      continue;
    }
    const wasRunning = isRunning(conn.state);
    conn.spec = spec;
    conn.limiter.setLimit(spec.maxConcurrency);
    if (wanted && (wasRunning || spec.autoStart)) {
      result.restarted.push(spec.name);
      work.push(conn.stop().then(() => void conn.start(true)));
    } else {
      result.stopped.push(spec.name);
      work.push(conn.stop());
    }
  }
  await Promise.all(work);
  return result;
};
