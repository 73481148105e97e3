import type { TranscriptEntry } from '../calls/transcript-entry.ts';
import type { TurnIO } from '../calls/types.ts';
import type { SubagentRun } from './subagents.ts';
import type { ProfileLimit } from '../trust/effective.ts';

/** How a new session starts: its agent, what is switched off, whose subagent or task it is. */
export interface SessionOptions {
  agent?: string;
  /** Servers and tools switched off from the start (what `/clear` carries over). */
  disabled?: string[];
  /** Whose subagent it is, and the parent turn's profile chain (it is never wider). */
  parent?: { id: string; callId: string; depth: number; chain: ProfileLimit[] };
  task?: string;
  /** Steps a turn may take, over what the agent and config say (a task's `maxSteps`). */
  maxSteps?: number;
}

/**
 * What a transcript says the session chose last: its agent, what it switched off, and how deep
 * in subagents it is (a child of a child is 2).
 */
export const savedChoices = (
  entries: readonly TranscriptEntry[],
): { agent?: string; disabled: string[]; depth: number } => {
  let agent: string | undefined;
  let disabled: string[] = [];
  let depth = 0;
  for (const entry of entries) {
    if (entry.type === 'agent' && typeof entry.agent === 'string') agent = entry.agent;
    else if (entry.type === 'tools' && Array.isArray(entry.disabled))
      disabled = entry.disabled.filter((d): d is string => typeof d === 'string');
    else if (entry.type === 'session' && entry.parent) depth = 1;
  }
  return { ...(agent ? { agent } : {}), disabled, depth };
};

/**
 * How a subagent's turn talks to the front-end: approvals go to whoever the parent asks; of its
 * events, each tool call shows as progress of the parent's `task` call.
 */
export const subagentIo = (job: SubagentRun): TurnIO => {
  let calls = 0;
  return {
    emit: (event) => {
      if (event.type !== 'tool-call') return;
      calls++;
      job.io.emit({
        type: 'tool-progress',
        id: job.callId,
        progress: calls,
        message: `${job.agent.name}: ${event.name}`,
      });
    },
    ask: (method, params, signal) => job.io.ask(method, params, signal),
  };
};
