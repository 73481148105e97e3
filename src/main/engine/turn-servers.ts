import type { McpServerStatus } from '../../workers/protocol/mcp.ts';
import { startupWaitLeft, waitForServers, type ServersView } from './server-waits.ts';

/**
 * The servers a turn waits for before its first request: those still starting whose tools are not
 * known yet. A server whose catalog was kept from its last run (see kept-catalog.ts) offers those
 * tools at once — a call of one waits for the server itself — and with `tools.search: always` no
 * MCP tool is sent whole, so the first request waits for no server at all.
 */
const serversToAwait = (
  statuses: readonly McpServerStatus[],
  search: 'auto' | 'always' | 'never',
): string[] =>
  search === 'always'
    ? []
    : statuses.filter((s) => s.state === 'starting' && s.catalog !== 'kept').map((s) => s.name);

/**
 * Waits, at most what is left of `mcp.startupWait` since the daemon started, for the servers a turn needs before it asks the model (see
 * `serversToAwait`); resolves with every server's status then (what the turn says it goes without).
 */
export const awaitTurnServers = async (
  engine: ServersView,
  signal: AbortSignal,
): Promise<McpServerStatus[]> => {
  const { tools } = engine.config;
  const statuses = await engine.mcp.status();
  const names = serversToAwait(statuses, tools.search);
  if (names.length === 0) return statuses;
  return waitForServers(engine, names, signal, startupWaitLeft(engine));
};
