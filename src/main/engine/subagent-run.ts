import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import { subagentIo } from '../extensions/session-state.ts';
import type { SessionOptions } from '../extensions/session-state.ts';
import { subagentResult, type Semaphore, type SubagentRun } from '../extensions/subagents.ts';
import type { PromptParams, TurnSummary } from '../protocol.ts';
import type { ProfileLimit } from '../trust/effective.ts';
import type { SessionLog } from './session-log.ts';
import type { TurnIO } from './tool-calls.ts';

/** A child session, as its parent runs it. */
interface ChildSession {
  readonly id: string;
  prompt(params: PromptParams, io: TurnIO, signal: AbortSignal): Promise<TurnSummary>;
  close(): Promise<void>;
}

/** The parent of a subagent: who it is, what it switched off, and how it opens a child. */
export interface SubagentParent {
  readonly log: SessionLog;
  readonly depth: number;
  readonly disabled: ReadonlySet<string>;
  /** How many subagents run at once in this daemon. */
  readonly slots: Semaphore | undefined;
  /** A new session under this one, whose turns use `model` unless its profile names one. */
  openChild(options: SessionOptions, model: string): ChildSession;
}

/** Runs a subagent's job in a child session; the parent's transcript records the child. */
export const runSubagent = async (
  parent: SubagentParent,
  job: SubagentRun,
  params: PromptParams,
  chain: ProfileLimit[],
  model: string,
): Promise<ToolResult> => {
  const run = async () => {
    // Never wider than this turn: its profile chain, and what this session switched off.
    const child = parent.openChild(
      {
        agent: job.agent.name,
        parent: { id: parent.log.id, callId: job.callId, depth: parent.depth, chain },
        disabled: [...parent.disabled],
      },
      model,
    );
    parent.log.transcript.append({
      type: 'child',
      time: new Date().toISOString(),
      turn: parent.log.turn,
      callId: job.callId,
      id: child.id,
      agent: job.agent.name,
    });
    try {
      const summary = await child.prompt(
        {
          sessionId: child.id,
          text: job.prompt,
          interactive: params.interactive,
          ...(params.yes ? { yes: true } : {}),
          ...(params.cwd ? { cwd: params.cwd } : {}),
        },
        subagentIo(job),
        job.signal,
      );
      return subagentResult(job.agent.name, { id: child.id, summary });
    } finally {
      await child.close();
    }
  };
  try {
    return await (parent.slots ? parent.slots.use(run, job.signal) : run());
  } catch (error) {
    return fail('canceled', (error as Error).message);
  }
};
