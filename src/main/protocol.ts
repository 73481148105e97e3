import type {
  McpCompleteMessage,
  McpPromptInfo,
  McpResourceInfo,
  McpResourceTemplateInfo,
  McpServerStatus,
  McpToolInfo,
  McpTraceEntry,
} from '../workers/protocol/mcp.ts';
import type { ChatMessage, Usage } from '../workers/protocol/api.ts';
import type { McpElicitation, McpElicitationAnswer } from '../workers/protocol/mcp.ts';
import type { ToolResult } from '../workers/protocol/tool-result.ts';
import type { LspServerStatus } from '../workers/protocol/lsp.ts';

/**
 * Front-end ⇄ engine protocol: JSON-RPC 2.0 method names with their params and results. The same
 * methods travel over the daemon's Unix socket and, in-process (`--no-daemon`, tests), over a
 * `MessageChannel`. The first request of every connection is `hello`, which compares versions.
 */
export interface EngineCalls {
  hello: { params: { version: string; pid: number; client: string }; result: HelloResult };
  'daemon/status': { params: Record<string, never>; result: DaemonStatus };
  'daemon/stop': { params: Record<string, never>; result: { stopping: true } };
  /** With `wait`, answers once no server is `starting` (bounded by the start-up timeouts). */
  'mcp/status': { params: { wait?: boolean }; result: McpStatusResult };
  /**
   * Starts a server by hand and answers once it is ready, or fails with its error (and the tail of
   * its stderr) when the attempt fails; with `noWait`, answers as soon as it is starting.
   */
  'mcp/start': { params: { name: string; noWait?: boolean }; result: McpServerStatus };
  'mcp/stop': { params: { name: string }; result: McpServerStatus };
  /** Stops and starts a server; answers as `mcp/start` does. */
  'mcp/restart': { params: { name: string; noWait?: boolean }; result: McpServerStatus };
  /**
   * Starts a remote server by hand and waits until it is ready or has failed; an OAuth
   * authorization on the way waits for the user, its URL in `mcp/status-changed` (`authUrl`).
   */
  'mcp/login': { params: { name: string }; result: McpServerStatus };
  /** Stops the server and forgets its OAuth tokens and client registration. */
  'mcp/logout': { params: { name: string }; result: { status: McpServerStatus; removed: boolean } };
  'mcp/tools': { params: { server?: string }; result: McpToolInfo[] };
  'mcp/call': {
    /** With `progressToken`, the server's progress notifications come back as `progress`. */
    params: { server: string; tool: string; args: Record<string, unknown>; progressToken?: string };
    result: ToolResult;
  };
  /** Prompts of the ready servers (of one with `server`). */
  'mcp/prompts': { params: { server?: string }; result: McpPromptInfo[] };
  /** `prompts/get`: the prompt's messages as text (`output`), to send as a message. */
  'mcp/prompt': {
    params: { server: string; prompt: string; args: Record<string, string> };
    result: ToolResult;
  };
  /** Resources and resource templates of the ready servers (of one with `server`). */
  'mcp/resources': {
    params: { server?: string };
    result: { resources: McpResourceInfo[]; templates: McpResourceTemplateInfo[] };
  };
  /** `resources/read` of one resource, as a tool result (text, or blobs described). */
  'mcp/read': { params: { server: string; uri: string }; result: ToolResult };
  /** `completion/complete`: values for a prompt's argument or a resource template's variable. */
  'mcp/complete': McpCompleteMessage;
  /** A server's protocol trace: its JSON-RPC messages after sequence number `since`. */
  'mcp/trace': { params: { server: string; since?: number }; result: McpTraceEntry[] };
  /** Every language server the workspace knows: state, pid, files open, last diagnostics. */
  'lsp/status': { params: Record<string, never>; result: LspStatusResult };
  /** Opens a new session, or resumes one (`resume: ID`, or `continue`: the latest). */
  'session/open': {
    /**
     * `atTurn` with `resume`: a new session that goes on from the end of that turn of the old one
     * (what came later — answers, compactions — is not in it; the old session stays as it was).
     */
    params: {
      resume?: string;
      continue?: boolean;
      atTurn?: number;
      /** A new session's agent profile (default `agent.default`); a resumed one keeps its own. */
      agent?: string;
      /** Servers and tools a new session starts with switched off (`/clear` carries them). */
      disabled?: string[];
    };
    result: SessionOpened;
  };
  /** Runs the session's turns with another agent profile from now on. */
  'session/agent': {
    params: { sessionId: string; agent: string };
    result: { agent: string };
  };
  /** Agent profiles, custom commands, repository tools and tasks, and files skipped. */
  'extensions/list': { params: Record<string, never>; result: ExtensionsList };
  /** Tasks: their schedules, next and last runs, runs missed while no daemon ran. */
  'task/list': { params: Record<string, never>; result: TaskInfo[] };
  /** Runs a task now as a session of its own that never asks; answers when it ends. */
  'task/run': {
    params: { name: string; inputs?: Record<string, string> };
    result: { sessionId: string; summary: TurnSummary };
  };
  /** A task's runs, oldest first (missed scheduled runs included). */
  'task/history': { params: { name: string }; result: TaskRun[] };
  /**
   * Runs one turn. Events arrive as `session/event` notifications; approvals and elicitations as
   * requests to this client. Cancelling the request cancels the turn.
   */
  'session/prompt': { params: PromptParams; result: TurnSummary };
  'session/list': { params: Record<string, never>; result: SessionSummary[] };
  /**
   * Sessions whose titles, prompts, answers or tool names hold every word of `text`, newest
   * first, at most `limit` (20; 1,000 at most), from an index beside the transcripts (rebuilt
   * when missing); `problems` names transcripts left out and index faults.
   */
  'session/search': {
    params: { text: string; limit?: number };
    result: { hits: SessionSearchHit[]; problems: string[] };
  };
  /**
   * What the next request of a session (the latest by default) holds, part by part, without
   * sending it — on `model`, default the session's last: `/context`, `sessions show --context`.
   */
  'session/context': {
    params: { sessionId?: string; model?: string; cwd?: string };
    result: ContextReport;
  };
  /** Compacts a session now (`/compact [focus]`): what was done, in words. */
  'session/compact': {
    params: { sessionId: string; focus?: string };
    result: { notes: string[] };
  };
  /**
   * The file changes of a turn (the last that made any, by default) of a session (the latest by
   * default): shown, and with `apply` put back as they were before it.
   */
  'session/undo': {
    params: { sessionId?: string; turn?: number; apply: boolean };
    result: {
      sessionId: string;
      turn: number;
      changes: { path: string; change: 'added' | 'modified' | 'deleted' }[];
      diff: string;
      applied: boolean;
      refused: string[];
    };
  };
  /** Switches servers or tools off (or back on) for this session. */
  'session/toggle': {
    params: { sessionId: string; name: string; enabled: boolean };
    result: { disabled: string[] };
  };
  /**
   * Makes this connection a gateway consumer over stdio (`niffler mcp serve`): its MCP messages
   * travel as `gateway/send` (in) and `gateway/message` (out) notifications, one JSON text each.
   * `server`: serve only that server, under its tools' own names.
   */
  'gateway/open': { params: { server?: string }; result: { consumer: number } };
  /**
   * Serves the gateway over Streamable HTTP on `host:port` (0: any free port) for as long as this
   * connection lasts. Requests must carry the bearer token whose SHA-256 is `tokenSha256`; a host
   * that is not loopback needs `remote: true`.
   */
  'gateway/listen': {
    params: { host: string; port: number; tokenSha256: string; server?: string; remote?: boolean };
    result: { url: string; host: string; port: number };
  };
  /** Reads the config again now (e.g. after the user trusted the workspace) and applies it. */
  'config/reload': { params: Record<string, never>; result: { ok: boolean; error?: string } };
  /**
   * Trusts the repository for exactly what the user was shown (`digest` of `TrustOffer`), and
   * applies it; refused when the config changed since.
   */
  'trust/accept': { params: { digest: string }; result: { ok: boolean; error?: string } };
}

/** Requests the engine sends to the front-end that started a turn. */
export interface ClientCalls {
  'approval/ask': { params: ApprovalAsk; result: { answer: ApprovalAnswer } };
  'elicitation/ask': {
    params: { server: string; elicitation: McpElicitation };
    result: McpElicitationAnswer;
  };
  'sampling/ask': {
    params: { server: string; summary: string; maxTokens: number };
    result: { approve: boolean };
  };
}

export type ClientMethod = keyof ClientCalls;

/** Notifications a front-end sends the engine. */
export interface FrontendNotifications {
  /** One MCP message (JSON text) from the consumer of `gateway/open`. */
  'gateway/send': { consumer: number; message: string };
}

export type FrontendNotification = keyof FrontendNotifications;

export type ApprovalAnswer = 'once' | 'session' | 'repo' | 'deny';

export interface ApprovalAsk {
  sessionId: string;
  callId: string;
  tool: string;
  server?: string;
  args: Record<string, unknown>;
  readOnly: boolean;
  destructive: boolean;
  reason: string;
}

export interface PromptParams {
  sessionId: string;
  text: string;
  /** Approve every tool call that config does not deny (`--yes`). */
  yes?: boolean;
  model?: string;
  /** False for one-shot runs: calls that need approval are denied, elicitations declined. */
  interactive: boolean;
  /**
   * Where the front-end runs: instruction files (NIFFLER.md, AGENTS.md, CLAUDE.md) from the root
   * down to it join the system prompt. The workspace root when absent.
   */
  cwd?: string;
}

export interface SessionOpened {
  sessionId: string;
  messages: ChatMessage[];
  warnings: string[];
  model: string;
  /**
   * What the session's turns have used so far, those of earlier runs (its transcript) included.
   * Absent from a daemon built before it was added, which says the same version.
   */
  spent?: SessionSpent;
  /** What this repository would contribute once trusted, when it is not (absent when trusted). */
  trust?: TrustOffer;
  /** The session's agent profile, and what it has switched off (absent from older daemons). */
  agent?: string;
  disabled?: string[];
}

/** One agent profile as listings show it. */
export interface AgentInfo {
  name: string;
  description: string;
  mode: 'primary' | 'subagent' | 'all';
  source: 'builtin' | 'user' | 'repo';
  file?: string;
  model?: string;
  tools?: string[];
  policy: Record<string, string>;
  maxSteps?: number;
  notes: string[];
}

/** One custom slash command as `/help` lists it. */
export interface CommandInfo {
  name: string;
  description: string;
  argumentHint?: string;
  source: 'builtin' | 'user' | 'repo';
  file: string;
}

/** A task as listings show it. */
export interface TaskInfo {
  name: string;
  description: string;
  source: 'builtin' | 'user' | 'repo';
  file: string;
  prompt?: string;
  command?: string;
  agent?: string;
  model?: string;
  inputs: Record<
    string,
    { description?: string; default?: string | number | boolean; required?: boolean }
  >;
  schedule?: string;
  /** When the schedule runs it next (absent without a daemon watching it). */
  next?: string;
  lastRun?: TaskRun;
  /** Scheduled runs missed while no daemon ran (reported, not run). */
  missed?: number;
}

/** One run of a task, or runs of its schedule missed while no daemon watched it. */
export interface TaskRun {
  task: string;
  trigger: 'manual' | 'schedule';
  sessionId?: string;
  startedAt: string;
  endedAt: string;
  outcome: TurnOutcome | 'missed';
  denied?: string[];
  error?: string;
  missed?: number;
}

/** A skill as `niffler skills` and `/skills` list it: found, valid or not, offered or not and why. */
export interface SkillInfo {
  name: string;
  description: string;
  /** `user` (yours) or `repo` (the repository's: it needs trust). */
  source: 'user' | 'repo';
  /** Where it was found: `.claude/skills`, `~/.agents/skills`. */
  location: string;
  /** Its SKILL.md. */
  file: string;
  trust: 'yours' | 'trusted' | 'untrusted' | 'changed';
  /** Offered to the model: valid, usable (trusted), the nearest of its name. */
  offered: boolean;
  /** Why it is not offered, and what reading it noted (keys ignored, entries left out). */
  problems: string[];
}

export interface ExtensionsList {
  agents: AgentInfo[];
  commands: CommandInfo[];
  /** Skills found, offered or not (absent from older daemons). */
  skills?: SkillInfo[];
  /** Repository tools: name, description, file, annotations. */
  tools: { name: string; description: string; file: string; readOnly: boolean }[];
  /** Files skipped (`file:line: what is wrong`), and what an untrusted repository left out. */
  problems: string[];
  /** Keys of loaded files niffler has no use for (`file:line key: not used by niffler; ignored`). */
  notes: string[];
}

/** An untrusted (or changed) repository's contribution, as the trust dialog shows it. */
export interface TrustOffer {
  level: 'untrusted' | 'changed';
  /** What `trust/accept` must name: the digest of exactly this contribution. */
  digest: string;
  servers: { name: string; command: string }[];
  /** Settings that widen what runs, `key: value` (secrets redacted). */
  settings: string[];
  /** Prompt files given to the model once trusted. */
  prompts: string[];
  /** Why the trust store cannot be used, when it cannot; then nothing can be trusted here. */
  problem?: string;
}

export interface SessionSpent {
  /** Turns that ended (a turn cut short by a killed daemon does not count; its tokens do). */
  turns: number;
  usage: Usage;
  /** 0 where the models used have no prices in the config. */
  costUsd: number;
}

export interface SessionSearchHit {
  id: string;
  title: string;
  updatedAt: string;
  /** The lower-cased text around the first word searched for. */
  snippet: string;
}

export interface SessionSummary {
  id: string;
  title: string;
  updatedAt: string;
  messages: number;
}

export type TurnOutcome = 'answered' | 'cancelled' | 'max-steps' | 'error';

export interface TurnSummary {
  outcome: TurnOutcome;
  /** The final answer's text (the last assistant message). */
  text: string;
  usage: Usage;
  costUsd?: number;
  steps: number;
  /** Tool calls that were denied (policy, one-shot without --yes, or the user). */
  denied: string[];
  error?: string;
}

/** What a front-end shows while a turn runs. */
export type SessionEvent =
  | { type: 'turn-start'; turn: number; model: string }
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; id: string; name: string; server?: string; args: Record<string, unknown> }
  | { type: 'tool-denied'; id: string; name: string; reason: string }
  | { type: 'tool-progress'; id: string; progress: number; total?: number; message?: string }
  | { type: 'tool-result'; id: string; name: string; result: ToolResult; ms: number }
  /** A skill was activated: by the model's `skill` call, or by the user (/skills NAME). */
  | {
      type: 'skill';
      name: string;
      source: 'user' | 'repo';
      /** Its directory, relative to the workspace (a repository's) or absolute (yours). */
      directory: string;
      files: number;
      by: 'model' | 'user';
    }
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  | { type: 'notice'; level: 'info' | 'warn'; text: string }
  | { type: 'usage'; usage: Usage; costUsd?: number }
  /** What the request just sent weighs against the model's window, and on what. */
  | { type: 'context'; use: ContextUse; window: number }
  | { type: 'turn-end'; summary: TurnSummary };

export type EngineMethod = keyof EngineCalls;
export type ParamsOf<M extends EngineMethod> = EngineCalls[M]['params'];
export type ResultOf<M extends EngineMethod> = EngineCalls[M]['result'];

/** Notifications the engine pushes to every attached front-end. */
export interface EngineNotifications {
  'mcp/status-changed': McpServerStatus;
  /** A server's prompts, resources or tools changed (or it started or stopped). */
  'mcp/catalog-changed': { server: string };
  'config/changed': { ok: boolean; error?: string; warnings: string[] };
  'session/event': { sessionId: string; event: SessionEvent };
  /** A task ran (by hand or on its schedule), or scheduled runs were found missed. */
  'task/ran': TaskRun;
  /** Progress of a long request, keyed by the request's progress token. */
  progress: { token: string; progress: number; total?: number; message?: string };
  /**
   * Sent to a front-end every `HEARTBEAT_MS` while one of its requests is in flight: the daemon is
   * alive, however long the answer takes (see daemon/deadline.ts).
   */
  'daemon/heartbeat': Record<string, never>;
  /** One MCP message (JSON text) for the consumer of `gateway/open`. */
  'gateway/message': { consumer: number; message: string };
  /** The gateway closed this consumer (the daemon stops, say): nothing more comes. */
  'gateway/closed': { consumer: number; reason: string };
}

export type EngineNotification = keyof EngineNotifications;

export type HelloResult =
  | { ok: true; version: string; pid: number; root: string }
  /** The daemon runs another version: it finishes its work, exits, and the front-end starts a new one. */
  | { ok: false; reason: 'version-mismatch'; version: string; pid: number };

export interface DaemonStatus {
  pid: number;
  version: string;
  root: string;
  socket: string | null;
  startedAt: number;
  uptimeMs: number;
  clients: number;
  runningTurns: number;
  /**
   * Sessions the daemon holds in memory: those an attached front-end opened or a turn runs on.
   * Others are on disk only (a resume reads them back); absent from older daemons.
   */
  sessionsInMemory?: number;
  memory: { rssBytes: number; heapUsedBytes: number };
  configFiles: { kind: string; file: string; exists: boolean }[];
  configError: string | null;
  idleMinutes: number;
  logFile: string;
  /** Why the daemon's log cannot be written now (file and errno in plain words). */
  logError?: string;
  /** Scheduled tasks: while there are any, the daemon does not exit when idle. */
  schedules?: { task: string; schedule: string; next?: string; missed?: number }[];
}

/** `lsp/status`: the language servers, and the settings that apply to them. */
export interface LspStatusResult {
  /** `lsp.enabled`. */
  enabled: boolean;
  /** `lsp.diagnosticsWait`, in seconds. */
  diagnosticsWait: number;
  servers: LspServerStatus[];
  /** The last config reload failed: the daemon keeps its last good config and says why. */
  configError: string | null;
}

/** A configured server that the worker does not run (yet): how `mcp status` shows config errors. */
export interface McpStatusResult {
  servers: McpServerStatus[];
  /** MCP clients of the gateway (`niffler mcp serve`) connected now; absent from older daemons. */
  consumers?: GatewayConsumerStatus[];
  /** The last config reload failed: the daemon keeps its last good config and says why. */
  configError: string | null;
  warnings: string[];
}

export type {
  LspServerStatus,
  McpPromptInfo,
  McpResourceInfo,
  McpResourceTemplateInfo,
  McpServerStatus,
  McpToolInfo,
  McpTraceEntry,
  ToolResult,
};

/** One MCP client of the gateway, as `mcp status` lists it. */
export interface GatewayConsumerStatus {
  id: number;
  /** `clientInfo.name` (`unknown` until it says). */
  name: string;
  version: string | null;
  transport: 'stdio' | 'http';
  /** The protocol revision it speaks (`2026-07-28`, `2025-11-25`…), once known. */
  revision: string | null;
  /** Served only this server (`niffler mcp serve --server NAME`). */
  server: string | null;
  connectedAt: number;
  lastSeenAt: number;
  calls: number;
  errors: number;
  inFlight: number;
}

/** JSON-RPC error code carrying a `WireError` in `data`. */
export const WIRE_ERROR_CODE = -32001;

// What `/context` shows: the context report (engine/context/report.ts makes it) and how a
// request's tokens are spent (engine/context/tokens.ts counts them).

/** Where a model's context window came from. */
export type WindowSource = 'config' | 'provider' | 'family' | 'default';

/** One part of the next request. */
export interface ContextPart {
  kind: 'system' | 'summary' | 'tools' | 'conversation';
  name: string;
  tokens: number;
  /** What was cut or left out of it, and why. */
  note?: string;
}

/** A compaction as the report lists it. */
interface CompactionInfo {
  turn: number;
  time: string;
  /** What it did, in words. */
  what: string;
}

/** The next request of a session, part by part, in tokens; the compactions made; cleared outputs. */
export interface ContextReport {
  sessionId: string;
  agent: string;
  /** The model the next request goes to (`models.<name>`). */
  model: string;
  window: number;
  windowSource: WindowSource;
  /** Tokens kept free for the answer. */
  reserve: number;
  /** What a request may weigh (the window less the reserve and the estimate's margin). */
  limit: number;
  /** Where compaction starts (`agent.compaction.threshold`), in tokens; null: only when it must. */
  threshold: number | null;
  /** How tokens are counted: the scale on the 4-characters-a-token estimate, and whence. */
  scale: number;
  calibrated: boolean;
  parts: ContextPart[];
  total: number;
  compactions: CompactionInfo[];
  clearedOutputs: { id: string; tool: string; file: string; tokens: number; exists: boolean }[];
}

/** How a request's tokens are spent, as `/context` shows it. */
export interface ContextUse {
  /** niffler's own instructions and git context. */
  system: number;
  /** Instruction files and servers' instructions. */
  instructions: number;
  /** The summary of the turns compacted away (in the system prompt). */
  summary: number;
  /** Tool definitions sent with the request. */
  tools: number;
  /** User and assistant messages (tool calls included). */
  messages: number;
  /** Tool results. */
  toolOutputs: number;
  total: number;
}

/** What the engine offers one attached front-end. */
export interface EngineHandlers {
  handle<M extends EngineMethod>(
    method: M,
    params: ParamsOf<M>,
    context: RequestContext,
  ): Promise<ResultOf<M>>;
  /** Registers a front-end for pushed notifications; returns its detach function. */
  attach(client: AttachedClient): () => void;
  /** A notification from a front-end (the gateway's consumer messages). */
  receive?<N extends FrontendNotification>(
    name: N,
    params: FrontendNotifications[N],
    client: AttachedClient,
  ): void;
}

export interface RequestContext {
  client: AttachedClient;
  signal: AbortSignal;
}

export interface AttachedClient {
  id: number;
  notify<N extends EngineNotification>(name: N, params: EngineNotifications[N]): void;
  /** Asks this front-end (approvals, elicitations); rejects if it goes away or `signal` aborts. */
  ask<M extends ClientMethod>(
    method: M,
    params: ClientCalls[M]['params'],
    signal?: AbortSignal,
  ): Promise<ClientCalls[M]['result']>;
}
