import type {
  DaemonStatus,
  GatewayConsumerStatus,
  McpServerStatus,
  McpStatusResult,
  SessionSearchHit,
  SessionSummary,
} from '../../main/protocol.ts';
import { tildify } from '../../main/paths.ts';
import { formatBytes, formatDuration, formatMs, truncate } from '../render/format.ts';
import { formatTable, paint, print, printJson, warn } from '../render/output.ts';

// How `niffler mcp status`, `niffler daemon status` and `niffler sessions` show what the daemon
// answered; the Ink app's /mcp and /sessions use the same tables. Shared by the command tree and
// the fast path (src/ui/fast.ts): nothing here may load the config schema, the SDK, Ink or the
// engine.

const stateColor = (state: McpServerStatus['state']): string => {
  switch (state) {
    case 'ready':
      return paint('green', state, process.stdout);
    case 'failed':
      return paint('red', state, process.stdout);
    case 'degraded':
    case 'starting':
    case 'untrusted':
    case 'needs-auth':
      return paint('yellow', state, process.stdout);
    default:
      return paint('dim', state, process.stdout);
  }
};

interface CellOptions {
  color: boolean;
  now: number;
}

/** Every column `mcp/status` can show, in the order `niffler mcp status` shows them. */
const MCP_CELLS = {
  NAME: (s) => s.name,
  STATE: (s, o) => (o.color ? stateColor(s.state) : s.state),
  // The revision negotiated: 2026-07-28, or the 2025 one `initialize` agreed on.
  PROTOCOL: (s) => s.protocolVersion ?? '-',
  PID: (s) => (s.pid ? String(s.pid) : '-'),
  // A stopped or failed server keeps its last startedAt; it has no uptime.
  UPTIME: (s, o) =>
    s.startedAt && s.state !== 'stopped' && s.state !== 'failed'
      ? formatDuration(o.now - s.startedAt)
      : '-',
  RESTARTS: (s) => String(s.restarts),
  TOOLS: (s) => String(s.tools),
  CALLS: (s) => String(s.calls),
  ERRORS: (s) => String(s.errors),
  P50: (s) => formatMs(s.p50Ms),
  P95: (s) => formatMs(s.p95Ms),
  // How its process is confined: bubblewrap (mcpServers.X.sandbox), resource limits, both.
  SANDBOX: (s) => [s.sandbox, s.limits ? 'limits' : undefined].filter(Boolean).join('+') || '-',
  // Only the first line: a multi-line error would break the table.
  'LAST ERROR': (s) => (s.lastError ? truncate(s.lastError.message.split('\n')[0] ?? '', 60) : ''),
} satisfies Record<string, (server: McpServerStatus, options: CellOptions) => string>;

export type McpStatusColumn = keyof typeof MCP_CELLS;

const MCP_COLUMNS = Object.keys(MCP_CELLS) as McpStatusColumn[];

/**
 * The servers of `mcp/status` as a table: every column unless `columns` picks some (in that
 * order); `color` paints the state as `paint` does for stdout (only on a terminal).
 */
export const mcpStatusTable = (
  servers: readonly McpServerStatus[],
  options: { color?: boolean; columns?: readonly McpStatusColumn[]; now?: number } = {},
): string => {
  const columns = options.columns ?? MCP_COLUMNS;
  const cell: CellOptions = { color: options.color ?? false, now: options.now ?? Date.now() };
  return formatTable(
    [...columns],
    servers.map((s) => columns.map((c) => MCP_CELLS[c](s, cell))),
  );
};

/** The gateway's consumers (`niffler mcp serve`) as a table. */
const consumersTable = (consumers: readonly GatewayConsumerStatus[], now = Date.now()) =>
  formatTable(
    ['CONSUMER', 'TRANSPORT', 'PROTOCOL', 'SERVES', 'CONNECTED', 'CALLS', 'ERRORS', 'IN FLIGHT'],
    consumers.map((c) => [
      `${c.name}${c.version ? ` ${c.version}` : ''}`,
      c.transport,
      c.revision ?? '-',
      c.server ?? 'all',
      formatDuration(now - c.connectedAt),
      String(c.calls),
      String(c.errors),
      String(c.inFlight),
    ]),
  );

/** Session search hits: id, when, title and where the words were found. */
export const searchTable = (hits: readonly SessionSearchHit[]): string =>
  formatTable(
    ['ID', 'UPDATED', 'TITLE', 'FOUND'],
    hits.map((h) => [
      h.id,
      h.updatedAt.slice(0, 16).replace('T', ' '),
      truncate(h.title, 40),
      truncate(h.snippet, 60),
    ]),
  );

/** `session/list` as a table: id, when it last changed, how many messages, and its title. */
export const sessionsTable = (list: readonly SessionSummary[]): string =>
  formatTable(
    ['ID', 'UPDATED', 'MESSAGES', 'TITLE'],
    list.map((s) => [
      s.id,
      s.updatedAt.replace('T', ' ').slice(0, 16),
      String(s.messages),
      truncate(s.title, 50),
    ]),
  );

/** Prints `mcp/status`: a table on a terminal (with the config error first), or JSON. */
export const showMcpStatus = (result: McpStatusResult, options: { json?: boolean }): void => {
  if (options.json) {
    printJson(result);
    return;
  }
  if (result.configError)
    warn(`the config has an error; the daemon keeps its last good config:\n${result.configError}`);
  const consumers = result.consumers ?? [];
  if (result.servers.length === 0)
    print('No MCP servers configured. Add one: niffler mcp add NAME -- COMMAND ARGS…');
  else print(mcpStatusTable(result.servers, { color: true }));
  if (consumers.length)
    print(`\nGateway consumers (niffler mcp serve):\n${consumersTable(consumers)}`);
  if (result.servers.length === 0) return;
  for (const server of result.servers)
    if (server.logError) warn(`server "${server.name}": ${server.logError}`);
  const problems = result.servers.flatMap((s) => s.problems.map((p) => `${s.name}: ${p.message}`));
  if (problems.length)
    print(`\nProblems the servers have (see niffler mcp logs NAME):\n${problems.join('\n')}`);
};

/** Prints `daemon/status`, or that no daemon runs for `root` (`status` null). */
export const showDaemonStatus = (
  status: DaemonStatus | null,
  where: { root: string; socket: string },
  options: { json?: boolean },
): void => {
  if (!status) {
    if (options.json) printJson({ running: false, ...where });
    else
      print(
        `No daemon runs for ${where.root}. Any niffler command that needs one starts it (e.g. niffler mcp status).`,
      );
    return;
  }
  if (options.json) {
    printJson({ running: true, ...status });
    return;
  }
  print(
    `daemon   pid ${status.pid}, version ${status.version}, up ${formatDuration(status.uptimeMs)}`,
  );
  print(`root     ${status.root}`);
  print(`socket   ${status.socket ?? '(in-process)'}`);
  const schedules = status.schedules ?? [];
  print(
    `clients  ${status.clients} attached, ${status.runningTurns} turn(s) running${status.sessionsInMemory === undefined ? '' : `, ${status.sessionsInMemory} session(s) in memory`}; ${schedules.length ? `stays up while ${schedules.length} task schedule(s) are active` : `exits after ${status.idleMinutes} min idle`}`,
  );
  for (const s of schedules)
    print(
      `schedule ${s.task}: ${s.schedule}, next ${s.next ?? '-'}${s.missed ? `; ${s.missed} run(s) missed while no daemon ran (not run; niffler task history ${s.task})` : ''}`,
    );
  print(
    `memory   ${formatBytes(status.memory.rssBytes)} RSS, ${formatBytes(status.memory.heapUsedBytes)} heap`,
  );
  print(`log      ${tildify(status.logFile)}`);
  if (status.logError) warn(status.logError);
  print(
    'config   ' +
      (status.configFiles
        .filter((f) => f.exists)
        .map((f) => tildify(f.file))
        .join(', ') || '(defaults only)'),
  );
  if (status.configError) print(`error    ${status.configError}`);
};
