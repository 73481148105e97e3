import type { McpServerStatus } from '../../../src/main/protocol.ts';
import type { ToolCard } from '../../../src/ui/app/state/types.ts';

/** A server status with every metric zeroed; override what a test cares about. */
export const server = (
  name: string,
  state: McpServerStatus['state'],
  extra: Partial<McpServerStatus> = {},
): McpServerStatus => ({
  name,
  displayName: name,
  transport: 'stdio',
  state,
  pid: null,
  startedAt: null,
  restarts: 0,
  lastError: null,
  nextRestartAt: null,
  inFlight: 0,
  queued: 0,
  tools: 0,
  prompts: 0,
  resources: 0,
  serverInfo: null,
  instructions: null,
  catalog: 'none',
  protocolVersion: null,
  problems: [],
  cache: { hits: 0, misses: 0, entries: 0 },
  toolMetrics: {},
  logFile: '',
  calls: 0,
  errors: 0,
  timeouts: 0,
  p50Ms: null,
  p95Ms: null,
  ...extra,
});

export const card = (extra: Partial<ToolCard> = {}): ToolCard => ({
  kind: 'tool',
  id: 'e1',
  callId: 'c1',
  name: 'everything__echo',
  server: 'everything',
  args: { message: 'hi' },
  status: 'running',
  startedAt: 0,
  ...extra,
});
