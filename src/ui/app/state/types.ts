import type {
  AgentInfo,
  SkillInfo,
  ApprovalAnswer,
  CommandInfo,
  ApprovalAsk,
  McpServerStatus,
  SessionEvent,
  SessionSpent,
  TrustOffer,
  TurnSummary,
} from '../../../main/protocol.ts';
import type { McpElicitation, McpElicitationAnswer } from '../../../workers/protocol/mcp.ts';
import type { ContextUse } from '../../../main/protocol.ts';
import type { McpOffers } from '../mcp-offers.ts';

type ToolStatus = 'running' | 'done' | 'error' | 'denied';

/** One tool call as a card: running, then done, failed or denied. */
export interface ToolCard {
  kind: 'tool';
  id: string;
  callId: string;
  name: string;
  server?: string;
  args: Record<string, unknown>;
  status: ToolStatus;
  startedAt: number;
  ms?: number;
  summary?: string;
  /** The full result text, shown when cards are expanded. */
  detail?: string;
  /** What the language servers found the call's change brought: `2 new errors: the first`. */
  problem?: string;
  /** The server's last progress notification while the call runs: `3/10 copying`. */
  progress?: string;
}

export type NoticeLevel = 'info' | 'warn' | 'error';

/** One item of the transcript. `id` is unique within a UI state (keys for Ink's `<Static>`). */
export type Entry =
  | { kind: 'user'; id: string; text: string; attachments: string[] }
  | { kind: 'assistant'; id: string; text: string; reasoning: string }
  | ToolCard
  | { kind: 'notice'; id: string; level: NoticeLevel; text: string }
  | { kind: 'output'; id: string; title: string; text: string }
  /** A skill activated: by the model (its `skill` call) or by the user (/skills NAME). */
  | {
      kind: 'skill';
      id: string;
      name: string;
      source: 'user' | 'repo';
      directory: string;
      files: number;
      by: 'model' | 'user';
    }
  | {
      kind: 'shell';
      id: string;
      command: string;
      output: string;
      exitCode: number | null;
      running: boolean;
    }
  | { kind: 'divider'; id: string; text: string };

/** What the engine (or the first-use check) asks the user; answered by a dialog. */
export type Dialog =
  | { kind: 'approval'; id: string; ask: ApprovalAsk }
  | { kind: 'elicitation'; id: string; server: string; elicitation: McpElicitation }
  | { kind: 'sampling'; id: string; server: string; summary: string; maxTokens: number }
  | { kind: 'trust'; id: string; offer: TrustOffer };

export type DialogAnswer =
  | { kind: 'approval'; answer: ApprovalAnswer }
  | { kind: 'elicitation'; answer: McpElicitationAnswer }
  | { kind: 'sampling'; approve: boolean }
  | { kind: 'trust'; trust: boolean };

export interface Totals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  turns: number;
}

/** A turn sent to the engine: `started` once its `turn-start` event arrived. */
export interface RunningTurn {
  startedAt: number;
  started: boolean;
  /** MCP servers still starting when the prompt was sent (the engine waits for them). */
  waitingFor: string[];
}

export interface UiState {
  workspace: string;
  model: string;
  sessionId: string | null;
  /** Finished entries: printed once, above the live area. */
  committed: Entry[];
  /** Entries of the running turn or shell command, redrawn on every change. */
  live: Entry[];
  turn: RunningTurn | null;
  servers: McpServerStatus[];
  /** Prompts and resources of the ready servers: `/server:prompt` and `@server:uri`. */
  offers: McpOffers;
  totals: Totals;
  dialogs: Dialog[];
  /** Ctrl-C was pressed once while idle: a second press exits. */
  exitArmed: boolean;
  /** Tool cards and reasoning shown in full. */
  expanded: boolean;
  nextId: number;
  /** What the last request weighed against the model's window (status bar, /context). */
  context: { use: ContextUse; window: number } | null;
  /** The session's agent profile, and the servers and tools it switched off. */
  agent: string;
  disabled: string[];
  /** Agent profiles, custom commands and skills (`/agent`, `/help`, `/skills`, completion). */
  extensions: { agents: AgentInfo[]; commands: CommandInfo[]; skills: SkillInfo[] };
}

/** An entry before the reducer gives it an id. */
export type NewEntry = Entry extends infer E ? (E extends Entry ? Omit<E, 'id'> : never) : never;

export type Action =
  | {
      type: 'session-opened';
      sessionId: string;
      model: string;
      history: NewEntry[];
      /** The session's totals so far: the status bar and /cost count from there. */
      spent: SessionSpent;
      agent?: string;
      disabled?: string[];
      note?: string;
    }
  | { type: 'session-event'; event: SessionEvent; now: number }
  | { type: 'submit'; text: string; attachments: string[]; now: number }
  | { type: 'turn-finished'; summary: TurnSummary | null; error?: string }
  | { type: 'servers'; servers: McpServerStatus[] }
  | { type: 'mcp-offers'; offers: McpOffers }
  | { type: 'server-status'; status: McpServerStatus }
  | { type: 'notice'; level: NoticeLevel; text: string }
  | { type: 'output'; title: string; text: string }
  | { type: 'shell-start'; command: string }
  | { type: 'shell-end'; output: string; exitCode: number | null }
  | { type: 'dialog-open'; dialog: Dialog }
  | { type: 'dialog-close'; id: string }
  | { type: 'exit-armed'; armed: boolean }
  | { type: 'toggle-expanded' }
  | { type: 'model'; model: string }
  | { type: 'agent'; agent: string }
  | { type: 'disabled'; disabled: string[] }
  | { type: 'extensions'; agents: AgentInfo[]; commands: CommandInfo[]; skills: SkillInfo[] };
