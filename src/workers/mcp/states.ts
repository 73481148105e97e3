import type { McpServerState } from '../protocol/mcp.ts';

/** What happens to a server connection; each moves it along `TRANSITIONS`. */
export type ConnectionEvent =
  /** An attempt to connect begins: by hand, at launch, or a scheduled restart. */
  | 'start'
  /** Handshake (initialize or server/discover) and first listings done. */
  | 'connected'
  /** An attempt failed and another is scheduled (restart backoff). */
  | 'retry'
  /** A ready connection ended by itself (exit, drop, no answer to the health check). */
  | 'lost'
  /** Too many failures within the window: stays down until started by hand. */
  | 'gave-up'
  /** OAuth needs the user: a browser flow waits, or `niffler mcp login` must run. */
  | 'needs-auth'
  /** The browser flow of an attempt ended; the attempt goes on. */
  | 'authorized'
  /** OAuth refused in a way a restart will not fix (a mismatched resource, say). */
  | 'refused'
  /** Stopped by hand, by a reload (that may lift a gate) or at shutdown. */
  | 'stop'
  /** The config switched it off (`enabled: false`) or its repository is not trusted. */
  | 'disable'
  | 'distrust';

type Table = { readonly [S in McpServerState]: Partial<Record<ConnectionEvent, McpServerState>> };

const GATES = { disable: 'disabled', distrust: 'untrusted' } as const;
const DOWN = { ...GATES, stop: 'stopped' } as const;

/**
 * The lifecycle of one server, the states of `niffler mcp status`: from each state, the state
 * each event leads to. An event missing from a row does not happen in that state.
 */
export const TRANSITIONS: Table = {
  // A stop of a gated server that the config no longer gates: it may start from now on.
  disabled: DOWN,
  untrusted: DOWN,
  stopped: { ...DOWN, start: 'starting' },
  starting: {
    ...DOWN,
    start: 'starting',
    connected: 'ready',
    retry: 'starting',
    'gave-up': 'failed',
    'needs-auth': 'needs-auth',
    refused: 'failed',
  },
  ready: { ...DOWN, lost: 'degraded', 'gave-up': 'failed', 'needs-auth': 'needs-auth' },
  degraded: {
    ...DOWN,
    start: 'degraded',
    connected: 'ready',
    retry: 'degraded',
    'gave-up': 'failed',
    'needs-auth': 'needs-auth',
    refused: 'failed',
  },
  failed: { ...DOWN, start: 'starting' },
  'needs-auth': {
    ...DOWN,
    start: 'starting',
    authorized: 'starting',
    retry: 'starting',
    'needs-auth': 'needs-auth',
    refused: 'failed',
    'gave-up': 'failed',
    connected: 'ready',
  },
};

/**
 * The state `event` leads to from `state`; `undefined` when the table has no such move (the
 * caller keeps its state and reports it: it is a bug, not something a server can cause).
 */
export const transition = (
  state: McpServerState,
  event: ConnectionEvent,
): McpServerState | undefined => TRANSITIONS[state][event];
