import type { DaemonStatus, McpServerStatus, McpStatusResult } from '../../main/protocol.ts';
import { tildify } from '../../main/paths.ts';
import { formatBytes, formatDuration, formatMs, truncate } from '../render/format.ts';
import { formatTable, paint, print, printJson, warn } from '../render/output.ts';

// How `niffler mcp status` and `niffler daemon status` show what the daemon answered. Shared by
// the command tree and the fast path (src/ui/fast.ts): nothing here may load the config schema,
// the SDK, Ink or the engine.

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

/** Prints `mcp/status`: a table on a terminal (with the config error first), or JSON. */
export const showMcpStatus = (result: McpStatusResult, options: { json?: boolean }): void => {
  if (options.json) {
    printJson(result);
    return;
  }
  if (result.configError)
    warn(`the config has an error; the daemon keeps its last good config:\n${result.configError}`);
  if (result.servers.length === 0) {
    print('No MCP servers configured. Add one: niffler mcp add NAME -- COMMAND ARGS…');
    return;
  }
  const now = Date.now();
  print(
    formatTable(
      [
        'NAME',
        'STATE',
        'PID',
        'UPTIME',
        'RESTARTS',
        'TOOLS',
        'CALLS',
        'ERRORS',
        'P50',
        'P95',
        'LAST ERROR',
      ],
      result.servers.map((s) => [
        s.name,
        stateColor(s.state),
        s.pid ? String(s.pid) : '-',
        s.startedAt && s.state !== 'stopped' && s.state !== 'failed'
          ? formatDuration(now - s.startedAt)
          : '-',
        String(s.restarts),
        String(s.tools),
        String(s.calls),
        String(s.errors),
        formatMs(s.p50Ms),
        formatMs(s.p95Ms),
        s.lastError ? truncate(s.lastError.message.split('\n')[0] ?? '', 60) : '',
      ]),
    ),
  );
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
  print(
    `clients  ${status.clients} attached, ${status.runningTurns} turn(s) running; exits after ${status.idleMinutes} min idle`,
  );
  print(
    `memory   ${formatBytes(status.memory.rssBytes)} RSS, ${formatBytes(status.memory.heapUsedBytes)} heap`,
  );
  print(`log      ${tildify(status.logFile)}`);
  print(
    'config   ' +
      (status.configFiles
        .filter((f) => f.exists)
        .map((f) => tildify(f.file))
        .join(', ') || '(defaults only)'),
  );
  if (status.configError) print(`error    ${status.configError}`);
};
