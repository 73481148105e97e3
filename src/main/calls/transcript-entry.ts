import type { ChatMessage, Usage } from '../../workers/protocol/api.ts';

// The shapes of a session's transcript: one JSONL line each. Declared here, below extensions
// (which read a session's entries) and the engine, which writes and replays them
// (engine/transcript.ts, engine/context/compaction.ts).

/** A compaction as the transcript records it. */
export interface CompactionMarker {
  /** Tool call ids whose outputs were cleared, and the file each output was saved to. */
  cleared: { id: string; file: string }[];
  /**
   * How many user messages (with all that followed each) `summary` replaces: the kept part starts
   * at the next one. Counted in user messages, which nothing inserts later, not by index.
   */
  summarizedTurns?: number;
  /**
   * Messages after the kept part's first user message that `summary` replaces too: the earlier
   * steps (an assistant message and its tool results, whole) of a turn too large to keep whole.
   */
  summarizedSteps?: number;
  summary?: string;
  /** Why `summary` is niffler's outline of the turns rather than a model's summary. */
  outline?: string;
}

type TurnOutcome = 'answered' | 'cancelled' | 'max-steps' | 'error';

/** One line of a session's JSONL transcript. */
export type TranscriptEntry =
  | {
      type: 'session';
      id: string;
      root: string;
      createdAt: string;
      version: string;
      /** A session that goes on from a turn of another (`--resume ID --at-turn N`). */
      forkedFrom?: { id: string; turn: number };
      /** A subagent's session: the session and the `task` call that started it. */
      parent?: { id: string; callId: string };
      /** A task's run: the task's name. */
      task?: string;
    }
  /** The agent profile the session's turns run with from here on. */
  | { type: 'agent'; time: string; turn: number; agent: string }
  /** The servers and tools switched off for this session from here on (all of them). */
  | { type: 'tools'; time: string; turn: number; disabled: string[] }
  /** A skill activated (by the model's `skill` call, or the user's /skills NAME): active from here on. */
  | {
      type: 'skill';
      time: string;
      turn: number;
      name: string;
      source: 'user' | 'repo';
      /** Its directory's real path. */
      dir: string;
      by: 'model' | 'user';
    }
  /** A subagent's session, started by the `task` call `callId` of this turn. */
  | { type: 'child'; time: string; turn: number; callId: string; id: string; agent: string }
  | { type: 'turn-start'; time: string; turn: number; model: string }
  | {
      type: 'message';
      time: string;
      turn: number;
      message: ChatMessage;
      model?: string;
      usage?: Usage;
    }
  /** The workspace's files before and after a turn that could change them (undo). */
  | {
      type: 'snapshot';
      time: string;
      turn: number;
      before: string;
      after?: string;
      skipped?: string[];
    }
  /** Old tool outputs cleared, or older turns summarized: replayed onto the history on load. */
  | { type: 'compaction'; time: string; turn: number; marker: CompactionMarker }
  | {
      type: 'turn-end';
      time: string;
      turn: number;
      outcome: TurnOutcome;
      usage: Usage;
      costUsd?: number;
      error?: string;
      steps: number;
    };
