import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import type { TurnSummary } from '../protocol.ts';
import type { ToolEntry, TurnIO } from '../calls/types.ts';
import type { AgentProfile } from './agents.ts';
import { whenAborted } from '../../workers/shared/abort.ts';

/** The name the model calls a subagent by. */
export const TASK_TOOL = 'task';

/** At most `size` holders at once; the rest wait in order. */
export class Semaphore {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }

  async use<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.#free > 0) this.#free--;
    else
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          off();
          resolve();
        };
        this.#waiting.push(go);
        const off = whenAborted(signal, () => {
          this.#waiting.splice(this.#waiting.indexOf(go), 1);
          reject(new Error('cancelled while waiting for a subagent slot'));
        });
      });
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}

/** What running one subagent needs from the session that calls it. */
export interface SubagentRun {
  agent: AgentProfile;
  prompt: string;
  callId: string;
  io: TurnIO;
  signal: AbortSignal;
}

/** A child session's end: its id and how its turn went. */
type SubagentOutcome = { id: string; summary: TurnSummary };

/** The task tool's answer to the model, from the child's end. */
export const subagentResult = (agent: string, outcome: SubagentOutcome): ToolResult => {
  const { id, summary } = outcome;
  const data = { sessionId: id, agent, outcome: summary.outcome, steps: summary.steps };
  if (summary.outcome === 'answered')
    return { ok: true, output: summary.text || '(the subagent answered with no text)', data };
  const why =
    summary.outcome === 'max-steps'
      ? `the subagent stopped after ${summary.steps} steps (its step bound) without finishing`
      : summary.outcome === 'cancelled'
        ? 'the subagent was cancelled'
        : `the subagent failed: ${summary.error ?? 'unknown error'}`;
  return fail(
    summary.outcome === 'cancelled' ? 'canceled' : 'tool-error',
    `${why} (session ${id})`,
    summary.text ? `its last text:\n${summary.text}` : undefined,
  );
};

/**
 * The `task` tool: hands a self-contained job to a subagent — a child session with its own
 * context, agent profile and tool set in this daemon — and returns its final answer.
 */
export const taskTool = (
  subagents: AgentProfile[],
  run: (job: SubagentRun) => Promise<ToolResult>,
): ToolEntry => {
  const names = subagents.map((a) => a.name);
  const list = subagents.map((a) => `${a.name} (${a.description || 'no description'})`);
  return {
    spec: {
      name: TASK_TOOL,
      description:
        'Hand a self-contained job to a subagent (its own context and tools); returns its final ' +
        `answer. It cannot see this conversation. Subagents: ${list.join('; ')}`,
      inputSchema: {
        type: 'object',
        properties: {
          prompt: { type: 'string', description: 'The whole job.' },
          agent: { type: 'string', enum: names },
        },
        required: ['prompt'],
      },
    },
    kind: 'engine',
    // Several in one step run side by side (bounded); each child snapshots its own changes.
    readOnly: true,
    destructive: false,
    run: async (args, call) => {
      const prompt = typeof args['prompt'] === 'string' ? args['prompt'].trim() : '';
      if (!prompt)
        return fail('invalid-args', 'task needs a prompt: the whole job, self-contained');
      const name = typeof args['agent'] === 'string' ? args['agent'] : names[0];
      const agent = subagents.find((a) => a.name === name);
      if (!agent || !call)
        return fail('invalid-args', `no subagent named "${name}"; there are: ${names.join(', ')}`);
      return run({ agent, prompt, callId: call.callId, io: call.io, signal: call.signal });
    },
  };
};
