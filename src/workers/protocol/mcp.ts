import type { ResourceLimits, SandboxPolicy } from './sandbox.ts';
import type { ToolResult } from './tool-result.ts';
import type { WireError } from './wire-error.ts';

/** The channel between the engine (`src/main/threads/mcp.ts`) and the MCP worker. Types only. */

/** How niffler reaches an MCP server (config `mcpServers.X.transport`). */
export const MCP_TRANSPORTS = ['stdio', 'http', 'sse', 'ws'] as const;
export type McpTransportKind = (typeof MCP_TRANSPORTS)[number];

/** The revision of the stateless era that niffler speaks (the SDK exports no name for it). */
export const MODERN_REVISION = '2026-07-28';

/** Whether the engine lets a server start at all: config `enabled` and workspace trust. */
type McpGate = 'startable' | 'disabled' | 'untrusted';

/** Levels of MCP `notifications/message` (RFC 5424, as the protocol names them). */
export type McpLogLevel =
  'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** OAuth settings of a remote server (config `oauth`); secrets never leave the worker. */
export interface McpOAuthSpec {
  /**
   * Default `authorization_code` (a browser); `cross_app`: RFC 8693 exchange, then RFC 7523;
   * `jwt_bearer`: RFC 7523 with the workload's own token (`assertion`/`assertionFile`).
   */
  grant?: 'authorization_code' | 'client_credentials' | 'cross_app' | 'jwt_bearer';
  /** jwt_bearer: the workload's JWT, or (`assertionFile`) a file holding it, read at each use. */
  assertion?: string;
  assertionFile?: string;
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  /** Loopback port of the redirect receiver; default: the registered one, else any free port. */
  redirectPort?: number;
  /** An https:// client ID metadata document (used where the server supports it). */
  clientMetadataUrl?: string;
  /** A PEM (PKCS#8) key file, relative to the root: `private_key_jwt` client authentication. */
  privateKeyFile?: string;
  /** JWS algorithm for `privateKeyFile`; default ES256. */
  signingAlgorithm?: string;
  idp?: { tokenEndpoint: string; clientId: string; clientSecret?: string; idToken: string };
  /** DPoP-bound tokens (RFC 9449): absent, where the authorization server offers it. */
  dpop?: boolean;
}

/** Everything the worker needs to run one server; built by `toServerSpec` from the config. */
export interface McpServerSpec {
  name: string;
  displayName: string;
  transport: McpTransportKind;
  command?: string;
  args?: string[];
  /** Added to the safe base environment (PATH, HOME, USER, LANG, TERM, SHELL, TMPDIR). */
  env?: Record<string, string>;
  workingDir?: string;
  url?: string;
  headers?: Record<string, string>;
  /** Per call; progress notifications reset it. */
  timeoutMs: number;
  /** Spawn/connect + initialize + first listings. */
  startupTimeoutMs: number;
  maxConcurrency: number;
  autoStart: boolean;
  gate: McpGate;
  oauth?: McpOAuthSpec;
  /** stdio: run in bubblewrap under this policy (absolute paths); `mcpServers.X.sandbox`. */
  sandbox?: SandboxPolicy;
  /** stdio: resource limits of the server and everything it starts; `mcpServers.X.limits`. */
  limits?: ResourceLimits;
  /**
   * `auto` (default): `server/discover` once per server definition, falling back to
   * `initialize`; `legacy`: the 2025 `initialize` only; `2026-07-28`: that revision or nothing.
   */
  protocol?: McpProtocolSetting;
  /** Every JSON-RPC message also goes to the server's log (the ring is always kept). */
  trace?: boolean;
  /** Tool results kept for this long, per server or per tool (read-only, idempotent tools only). */
  cache?: McpCacheSpec;
}

/** Config `mcpServers.X.protocol`. */
export const MCP_PROTOCOL_SETTINGS = ['auto', 'legacy', MODERN_REVISION] as const;
type McpProtocolSetting = (typeof MCP_PROTOCOL_SETTINGS)[number];

/** `mcpServers.X.cache`: `ttlSeconds` for every eligible tool, `tools` per tool (wins). */
export interface McpCacheSpec {
  ttlSeconds?: number;
  tools?: Record<string, { ttlSeconds: number }>;
}

/** Restart and health tuning; defaults: 500 ms → 30 s backoff, 5 failures in 5 min, ping 30 s. */
export interface McpHealthOptions {
  initialDelayMs?: number;
  maxDelayMs?: number;
  maxFailures?: number;
  failureWindowMs?: number;
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  /** Terminate → kill grace when stopping a process group. */
  killGraceMs?: number;
}

/** `workerData` of the MCP worker. */
export interface McpWorkerData {
  servers: McpServerSpec[];
  /** The workspace root: the first root and the default working directory. */
  root: string;
  /** Roots offered to servers: the workspace root plus `tools.allowedPaths` (absolute paths). */
  roots: string[];
  /** `$NIFFLER_HOME/logs/mcp/<workspace-key>`: one rotating `<server>.log` per server. */
  logsDir: string;
  /** Where results over `maxOutputChars` are saved (`$NIFFLER_HOME/outputs/<workspace-key>`). */
  outputsDir: string;
  /**
   * `$NIFFLER_HOME/run/<key>.servers`: a record of each server process group while it runs, so
   * the next daemon can end what a killed one left. Nothing is recorded when absent.
   */
  serversDir?: string;
  /** `$NIFFLER_HOME/auth`: OAuth tokens and registrations (0600), one file per server URL. */
  authDir?: string;
  logLevel: McpLogLevel;
  /** Characters of tool output kept inline; default 30 000. */
  maxOutputChars?: number;
  /** Bytes per server log before it rotates; default 1 MiB, 3 generations kept. */
  maxLogBytes?: number;
  health?: McpHealthOptions;
  /** `$NIFFLER_HOME/mcp/protocols.json`: which era each server definition speaks; memory only when absent. */
  protocolsFile?: string;
  /**
   * `$NIFFLER_HOME/mcp/catalogs/<workspace-key>`: each server's last catalog, offered on a cold
   * start until the server's own arrives (see kept-catalog.ts); none kept when absent.
   */
  catalogsDir?: string;
  /** niffler's version: a catalog kept by another version is not used. */
  version?: string;
  /** How long a tool call waits for its server to finish starting (`mcp.startupWait`, in ms). */
  startupWaitMs?: number;
  /**
   * A prompt is on its way (a cold daemon started for one): when every server that starts by
   * itself has a kept catalog, the worker answers from those and loads its client code (the SDK,
   * a few hundred ms of a thread busy on two cores) only once the first request has been sent
   * (`load-client`), another request needs it, or a few seconds have passed.
   */
  deferClient?: boolean;
  /**
   * `tools.search: always`: no MCP tool goes whole in a request, so the first one waits for no
   * server (engine/turn-servers.ts); with `deferClient`, the worker defers as when every catalog is
   * kept, kept or not.
   */
  toolsDeferred?: boolean;
  /**
   * How long a deferred load waits for the first request at most, in ms (default 3 s;
   * `NIFFLER_MCP_DEFER_MS`: tests that read the order of a cold start's steps on a loaded machine).
   */
  deferFallbackMs?: number;
  /**
   * False where servers start anew for every command (no daemon): `auto` servers whose era is
   * not known yet connect with `initialize` instead of probing. Default true.
   */
  probe?: boolean;
}

/** The first message to an MCP worker started without its data (`McpHost.boot`). */
export interface McpWorkerInit {
  type: 'init';
  data: McpWorkerData;
}

/**
 * A server's state, the same word in `mcp status`'s table, its JSON, `/mcp` and the docs.
 * `needs-auth`: the server wants OAuth authorization (`niffler mcp login NAME`).
 */
export const MCP_SERVER_STATES = [
  'disabled',
  'untrusted',
  'stopped',
  'starting',
  'ready',
  'degraded',
  'failed',
  'needs-auth',
] as const;
export type McpServerState = (typeof MCP_SERVER_STATES)[number];

/**
 * What a tool was seen to do in its calls so far: produce images or audio only (no text), binary
 * resources, results over the output cap, progress, or ask its caller for elicitation, sampling
 * or roots. The capabilities module derives a tool's requirements from them.
 */
export type McpToolFact =
  'images' | 'audio' | 'binary' | 'large' | 'progress' | 'elicitation' | 'sampling' | 'roots';

/** A tool as the engine and providers see it: model-facing name, schema passed through whole. */
export interface McpToolInfo {
  /** `server__tool`, matching `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  /** What its calls were seen to do (absent until something was seen). */
  observed?: McpToolFact[];
}

export interface McpPromptInfo {
  server: string;
  name: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}

export interface McpResourceInfo {
  server: string;
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}

export interface McpResourceTemplateInfo {
  server: string;
  uriTemplate: string;
  name: string;
  description?: string;
  mimeType?: string;
}

/** One JSON-RPC message of a server's protocol trace. */
export interface McpTraceEntry {
  /** Increases by one per message of the server (`get-trace` since). */
  seq: number;
  /** Epoch ms. */
  at: number;
  direction: 'out' | 'in';
  kind: 'request' | 'notification' | 'response' | 'error';
  method?: string;
  id?: string | number;
  /** Length of the message's JSON. */
  chars: number;
  /** For an answer: how long after its request it came. */
  ms?: number;
  /** The message's JSON, secrets redacted, long strings and bodies cut. */
  body: string;
}

/** A `completion/complete` reference: a prompt's argument, or a resource template's variable. */
export type McpCompletionRef =
  { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

/** `completion/complete` of one prompt argument or template variable, and the values found. */
export interface McpCompleteMessage {
  params: {
    server: string;
    ref: McpCompletionRef;
    argument: { name: string; value: string };
    context?: Record<string, string>;
  };
  result: { values: string[]; hasMore: boolean };
}

/** Requests the gateway passes to a server as they are (`forward`), for results kept whole. */
export type McpForwardMethod =
  | 'prompts/get'
  | 'resources/read'
  | 'completion/complete'
  | 'resources/subscribe'
  | 'resources/unsubscribe';

/** A forwarded request's result as the server sent it, or its JSON-RPC error (code kept). */
export type McpForwardResult =
  | { ok: true; result: Record<string, unknown> }
  | { ok: false; code: number; message: string; data?: unknown };

export interface McpCallMetrics {
  calls: number;
  errors: number;
  timeouts: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

/**
 * Where the catalog a server's status counts comes from: the server in this run (`live`), the one
 * kept from an earlier run while the server is still starting (`kept`: a cold start offers its
 * tools at once, and a call waits for the server), or none.
 */
export type McpCatalogSource = 'live' | 'kept' | 'none';

export interface McpServerStatus extends McpCallMetrics {
  name: string;
  displayName: string;
  transport: McpTransportKind;
  state: McpServerState;
  pid: number | null;
  /** Epoch ms of the current connection. */
  startedAt: number | null;
  restarts: number;
  lastError: { message: string; at: number } | null;
  /** Epoch ms of the next automatic restart, while one is scheduled. */
  nextRestartAt: number | null;
  inFlight: number;
  queued: number;
  tools: number;
  prompts: number;
  resources: number;
  serverInfo: { name: string; version: string } | null;
  instructions: string | null;
  catalog: McpCatalogSource;
  /** The protocol revision negotiated (`2026-07-28`, `2025-11-25`…), while connected. */
  protocolVersion: string | null;
  /** The recent protocol problems of a connected server (bad tool annotations, a broken revision…). */
  problems: { message: string; at: number }[];
  /** Tool results served from the result cache, and calls that found nothing there. */
  cache: { hits: number; misses: number; entries: number };
  /** Per tool, by the server's own tool name. */
  toolMetrics: Record<string, McpCallMetrics>;
  logFile: string;
  /** Why the server's log cannot be written now (file and errno in plain words). */
  logError?: string;
  /** While an authorization waits for the user: the URL to open in a browser. */
  authUrl?: string;
  /** How its process is confined (from its spec): `bwrap` when sandboxed, and its limits. */
  sandbox?: 'bwrap';
  limits?: ResourceLimits;
}

/** A form elicitation from a server (`elicitation/create`), schema as the server sent it. */
export interface McpElicitation {
  message: string;
  requestedSchema: Record<string, unknown>;
}

export type McpElicitationAnswer =
  | { action: 'accept'; content: Record<string, string | number | boolean | string[]> }
  | { action: 'decline' | 'cancel'; reason?: string };

/** `sampling/createMessage` params as the server sent them (messages, systemPrompt, maxTokens…). */
export type McpSamplingParams = Record<string, unknown> & {
  messages: { role: 'user' | 'assistant'; content: unknown }[];
  maxTokens: number;
};

export type McpSamplingAnswer =
  | {
      ok: true;
      model: string;
      role: 'assistant';
      content: { type: 'text'; text: string };
      stopReason?: string;
    }
  | { ok: false; reason: string };

/** Request/response pairs: `params` travel with `{ type, id }`, the reply is `result`. */
export type McpCalls = {
  status: { params: object; result: McpServerStatus[] };
  'list-tools': { params: object; result: McpToolInfo[] };
  'list-prompts': { params: object; result: McpPromptInfo[] };
  'list-resources': { params: object; result: McpResourceInfo[] };
  'list-resource-templates': { params: object; result: McpResourceTemplateInfo[] };
  /** `completion/complete`: values for one argument; empty where the server offers none. */
  complete: McpCompleteMessage;
  /** The server's protocol trace after sequence number `since`. */
  'get-trace': { params: { server: string; since?: number }; result: McpTraceEntry[] };
  /** Forgets every cached tool result (the workspace changed). */
  'invalidate-cache': { params: object; result: object };
  'read-resource': { params: { server: string; uri: string }; result: ToolResult };
  'get-prompt': {
    params: { server: string; prompt: string; args: Record<string, string> };
    result: ToolResult;
  };
  /** Never rejects for tool or server failures: those are a `ToolResult` with `ok: false`. */
  'call-tool': {
    /**
     * `progress`: ask the server for progress notifications (forwarded as `progress` events).
     * `asker`: the caller's number, echoed on the elicitation and sampling requests the server
     * makes during this call, so that they reach whoever made the call.
     */
    params: {
      name: string;
      args: Record<string, unknown>;
      progress?: boolean;
      asker?: number;
      /** How long to wait for a server still starting (`mcp.startupWait`); unbounded when absent. */
      waitMs?: number;
    };
    result: ToolResult;
  };
  /** A request passed to `server` as it is; its result (or JSON-RPC error) comes back whole. */
  forward: {
    /** `asker`: as for `call-tool`, for the server's input requests during this one. */
    params: {
      server: string;
      method: McpForwardMethod;
      params: Record<string, unknown>;
      asker?: number;
    };
    result: McpForwardResult;
  };
  /** With `on`, every server's `notifications/message` is posted as a `server-log` event too. */
  'set-log-forwarding': { params: { on: boolean }; result: object };
  start: { params: { server: string }; result: McpServerStatus };
  stop: { params: { server: string }; result: McpServerStatus };
  restart: { params: { server: string }; result: McpServerStatus };
  /** Config reload: changed servers restart, new ones start, removed ones stop. */
  'update-servers': {
    params: { servers: McpServerSpec[] };
    result: { started: string[]; stopped: string[]; restarted: string[]; unchanged: string[] };
  };
  'set-roots': { params: { roots: string[] }; result: { notified: string[] } };
  'set-log-level': { params: { level: McpLogLevel }; result: object };
  /** Results longer than this many characters are saved to a file and previewed (config reload). */
  'set-output-limit': { params: { maxChars: number }; result: object };
  /** Stops every server (process groups ended); the worker exits afterwards. */
  shutdown: { params: object; result: object };
};

type McpMethod = keyof McpCalls;

export type McpRequest =
  | { [K in McpMethod]: { type: K; id: number } & McpCalls[K]['params'] }[McpMethod]
  /** Aborts request `id` (a call gets `notifications/cancelled`). */
  | { type: 'cancel'; id: number }
  | { type: 'elicitation-answer'; requestId: number; answer: McpElicitationAnswer }
  | { type: 'sampling-answer'; requestId: number; answer: McpSamplingAnswer }
  /** The first request of a cold start has been sent: load the client code now (`deferClient`). */
  | { type: 'load-client' }
  /**
   * Collect this thread's garbage: `always` after a busy stretch of turns, otherwise (the daemon
   * has gone quiet) if it grew enough to be worth it (shared/gc.ts).
   */
  | { type: 'collect-garbage'; always?: boolean };

export type McpEvent =
  /**
   * The worker takes requests. `statuses`: every server's state as the worker starts, sent by a
   * worker still loading its client code (early-answers.ts), which cannot answer while that code
   * loads: main answers `status` from them, and from the status events after them, until `serving`.
   */
  | { type: 'ready'; statuses?: McpServerStatus[] }
  /** The client code has loaded: the manager answers every request from now on. */
  | { type: 'serving' }
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; error: WireError }
  /** Progress of request `id` (a tool call); resets the caller's timeout. */
  | { type: 'progress'; id: number; progress: number; total?: number; message?: string }
  | { type: 'status'; status: McpServerStatus }
  /**
   * `kept`: the server's live catalog has just replaced the one kept from an earlier run, and
   * differed from it thus (tool names as the server names them).
   */
  | {
      type: 'tools-changed';
      server: string;
      tools: McpToolInfo[];
      kept?: { added: string[]; removed: string[]; changed: string[] };
    }
  | { type: 'prompts-changed'; server: string }
  | { type: 'resources-changed'; server: string }
  | {
      type: 'log';
      level: 'debug' | 'info' | 'warn' | 'error';
      msg: string;
      data?: Record<string, unknown>;
    }
  /** A server's log message (`notifications/message`), while log forwarding is on. */
  | { type: 'server-log'; server: string; level: McpLogLevel; logger?: string; data: unknown }
  /** `asker`: the caller of the tool call this request belongs to, when it can be told. */
  | {
      type: 'elicitation-request';
      requestId: number;
      server: string;
      elicitation: McpElicitation;
      asker?: number;
    }
  | {
      type: 'sampling-request';
      requestId: number;
      server: string;
      params: McpSamplingParams;
      asker?: number;
    };
