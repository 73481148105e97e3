import type { ToolCall } from '../../workers/protocol/api.ts';
import type { PromptParams } from '../protocol.ts';
import type { ToolTable, TurnIO } from '../calls/types.ts';
import { TASK_TOOL } from './subagents.ts';

/**
 * Asks the user whether a command may switch the turn to a wider profile: `--yes` says yes, a
 * one-shot run without it says no, an interactive session asks (the answer holds for this turn).
 */
export const approveSwitch = async (
  sessionId: string,
  params: PromptParams,
  io: TurnIO,
  signal: AbortSignal,
  command: string,
  reason: string,
): Promise<boolean> => {
  if (params.yes) return true;
  if (!params.interactive) return false;
  const { answer } = await io.ask(
    'approval/ask',
    {
      sessionId,
      callId: `agent-switch-${command}`,
      tool: `/${command}`,
      args: {},
      readOnly: false,
      destructive: false,
      reason,
    },
    signal,
  );
  return answer !== 'deny';
};

/**
 * The step's unusable calls, with the `task` calls past the subagent limits added: one deeper than
 * `agent.subagents.maxDepth` (the tool is not offered there), or more in one step than
 * `maxConcurrent` start at once. Each gets a result that says which limit and what to do.
 */
export const subagentLimits = (
  calls: readonly ToolCall[],
  invalid: ReadonlyMap<string, string>,
  table: ToolTable,
  limits: { maxDepth: number; maxConcurrent: number; depth: number },
): ReadonlyMap<string, string> => {
  const tasks = calls.filter((c) => c.name === TASK_TOOL && !invalid.has(c.id));
  if (tasks.length === 0) return invalid;
  const out = new Map(invalid);
  if (!table.has(TASK_TOOL)) {
    if (limits.depth >= limits.maxDepth)
      for (const call of tasks)
        out.set(
          call.id,
          `subagents nest at most ${limits.maxDepth} deep (agent.subagents.maxDepth), and this is depth ${limits.depth}: do this part yourself`,
        );
    return out;
  }
  for (const call of tasks.slice(limits.maxConcurrent))
    out.set(
      call.id,
      `${tasks.length} task calls in one step; at most ${limits.maxConcurrent} start at once (agent.subagents.maxConcurrent): this one was not run — send it again once those have answered`,
    );
  return out;
};
