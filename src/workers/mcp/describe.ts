import type { McpServerState, McpTransportKind } from '../protocol/mcp.ts';
import type { Health } from './backoff.ts';

/** How a server process ended. */
interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The limit it ended on, as a phrase (see `ProcessExit.limit`). */
  limit?: string;
}

export const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/** Characters of an error message kept in a start failure. */
const MAX_MESSAGE = 600;

/** How a connection ended by itself, worded to follow `server "x" `. */
export const describeExit = (exit: ProcessEnd | undefined, kind: McpTransportKind): string => {
  if (!exit) return kind === 'stdio' ? 'closed its stdout' : 'closed the connection';
  if (exit.limit) return exit.limit;
  return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
};

/**
 * Why a start failed, worded to follow `server "x" `, with the last lines the server wrote to
 * stderr (redacted here, where it becomes the last error; a line written twice — the process ran
 * twice, after exiting on the probe — once).
 */
export const describeStartFailure = (
  failure: { message: string; exit?: ProcessEnd | undefined },
  kind: McpTransportKind,
  stderrTail: string[],
  redact: (text: string) => string,
): string => {
  const lines = [...new Set(stderrTail)];
  const tail = lines.length ? `: ${redact(lines.join(' | '))}` : '';
  if (failure.exit) return `${describeExit(failure.exit, kind)} during start-up${tail}`;
  // One line, of a length a status table can show (a schema error can run to pages).
  let message = failure.message.replace(/\s+/g, ' ').trim();
  if (message.length > MAX_MESSAGE) message = `${message.slice(0, MAX_MESSAGE)}…`;
  // A failed negotiation says what it is on its own.
  if (/^(advertised|does not speak|negotiating)/.test(message)) return `${redact(message)}${tail}`;
  return `failed to start: ${redact(message)}${tail}`;
};

/** Words a lost connection for a request that was in flight, and what happens next. */
export const describeLoss = (
  server: { name: string; state: McpServerState; dropReason: string },
  method: string,
  health: Health,
): string => {
  const then =
    server.state === 'failed'
      ? `; it failed ${health.maxFailures} times within ${seconds(health.failureWindowMs)} and stays stopped until started by hand (niffler mcp start ${server.name})`
      : server.state === 'stopped'
        ? ''
        : '; restarting';
  return `server "${server.name}" ${server.dropReason} during ${method}${then}`;
};
