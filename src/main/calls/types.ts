import type { ToolCall, ToolSpec } from '../../workers/protocol/api.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import type { ClientCalls, ClientMethod, SessionEvent } from '../protocol.ts';

// The shapes a turn's tool calls take: a tool's entry and the turn's table of them, the turn's
// way to its front-end, and the hooks around a call. Declared here, below extensions and lsp,
// which make entries and hooks, and the engine, which runs them (engine/tool-calls.ts).

/** How a turn talks to the front-end that started it. */
export interface TurnIO {
  emit(event: SessionEvent): void;
  ask<M extends ClientMethod>(
    method: M,
    params: ClientCalls[M]['params'],
    signal: AbortSignal,
  ): Promise<ClientCalls[M]['result']>;
}

/** What the planner needs to know of a tool (or of a skill, which `tool_search` finds too). */
export interface SearchableTool {
  spec: ToolSpec;
  /** Built-in tools are deferred only when a small window needs it, and only the optional ones; a `skill` is activated with the `skill` tool. */
  kind: 'builtin' | 'mcp' | 'skill';
  server?: string;
}

/** A tool the model may call this turn, with what approvals need to know about it. */
export interface ToolEntry {
  spec: ToolSpec;
  /** `engine`: niffler's own, answered by the engine itself (`tool_search`), never asked. */
  kind: 'builtin' | 'mcp' | 'engine';
  /** How an `engine` tool answers; `call` is the call's id, the turn's IO and its signal. */
  run?: (args: Record<string, unknown>, call?: EngineCall) => Promise<ToolResult>;
  readOnly: boolean;
  defaultPolicy?: 'allow' | 'ask';
  server?: string;
  destructive: boolean;
  /**
   * An `engine` tool that is approved as an MCP tool is (a repository tool): asks unless it is
   * read-only or a rule allows it. Without it, an engine tool is never asked.
   */
  asks?: boolean;
  /** What `tool_search` finds through this tool besides tools (the `skill` tool: the skills). */
  searchable?: readonly SearchableTool[];
}

export type ToolTable = Map<string, ToolEntry>;

/** What an `engine` tool's `run` gets besides its arguments. */
interface EngineCall {
  callId: string;
  io: TurnIO;
  signal: AbortSignal;
}

/** What PreToolUse hooks said of a call: block it, allow or ask regardless, other arguments. */
export interface PreCall {
  block?: string;
  allow?: string;
  ask?: string;
  args?: Record<string, unknown>;
}

/** The hooks around each call: before it is decided, and after it ran. */
export interface CallHooks {
  before(call: ToolCall, entry: Pick<ToolEntry, 'kind'>): Promise<PreCall>;
  after(call: ToolCall, entry: Pick<ToolEntry, 'kind'>, result: ToolResult): Promise<ToolResult>;
}
