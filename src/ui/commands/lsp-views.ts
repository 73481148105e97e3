import type { LspServerStatus, LspStatusResult } from '../../main/protocol.ts';
import { tildify } from '../../main/paths.ts';
import { formatDuration, truncate } from '../render/format.ts';
import { formatTable, paint, print, printJson, warn } from '../render/output.ts';

// How `niffler lsp status` and the Ink app's /lsp show the language servers: one table, then what
// each one waits for or went through, in words. Loads nothing but the renderers.

const stateColor = (state: LspServerStatus['state']): string => {
  switch (state) {
    case 'ready':
      return paint('green', state, process.stdout);
    case 'failed':
      return paint('red', state, process.stdout);
    case 'starting':
    case 'degraded':
    case 'untrusted':
    case 'missing':
      return paint('yellow', state, process.stdout);
    default:
      return paint('dim', state, process.stdout);
  }
};

const ago = (at: number | null, now: number): string =>
  at === null ? '-' : `${formatDuration(now - at)} ago`;

/** The servers as a table: state, pid, files open, when they last gave diagnostics, restarts. */
export const lspStatusTable = (
  servers: readonly LspServerStatus[],
  options: { color?: boolean; now?: number } = {},
): string => {
  const now = options.now ?? Date.now();
  return formatTable(
    ['NAME', 'STATE', 'PID', 'FILES', 'LAST DIAGNOSTICS', 'RESTARTS', 'SOURCE', 'COMMAND'],
    servers.map((s) => [
      s.name,
      options.color ? stateColor(s.state) : s.state,
      s.pid ? String(s.pid) : '-',
      String(s.files),
      ago(s.lastDiagnosticsAt, now),
      String(s.restarts),
      `${s.source}${s.sandbox ? '+bwrap' : ''}`,
      truncate(tildify(s.command), 60),
    ]),
  );
};

/** What each server waits for, its last error, and its notes, one line each. */
export const lspStatusLines = (servers: readonly LspServerStatus[], now = Date.now()): string[] =>
  servers.flatMap((s) => [
    ...(s.reason ? [`${s.name}: ${s.reason}`] : []),
    ...(s.lastError
      ? [
          `${s.name}: ${s.lastError.message} (${ago(s.lastError.at, now)})${s.nextRestartAt ? `; restarting in ${formatDuration(Math.max(0, s.nextRestartAt - now))}` : ''}`,
        ]
      : []),
    ...s.notes.map((n) => `${s.name}: ${n.message} (${ago(n.at, now)})`),
  ]);

/** Prints `lsp/status`: the table and its lines on a terminal, or JSON. */
export const showLspStatus = (result: LspStatusResult, options: { json?: boolean }): void => {
  if (options.json) {
    printJson(result);
    return;
  }
  if (result.configError)
    warn(`the config has an error; the daemon keeps its last good config:\n${result.configError}`);
  if (!result.enabled) print('Language servers are off here (lsp.enabled: false).');
  print(lspStatusTable(result.servers, { color: true }));
  const lines = lspStatusLines(result.servers);
  if (lines.length) print(`\n${lines.join('\n')}`);
};
