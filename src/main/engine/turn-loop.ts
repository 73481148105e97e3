import type { Usage } from '../../workers/protocol/api.ts';
import { toWire } from '../errors.ts';
import type { AgentProfile } from '../extensions/agents.ts';
import type { SessionHooks } from '../extensions/hook-points.ts';
import type { SessionSkills } from '../extensions/skill-session.ts';
import type { TurnPlan } from '../extensions/turn.ts';
import { subagentLimits } from '../extensions/turn-calls.ts';
import type { PromptParams, TurnOutcome, TurnSummary } from '../protocol.ts';
import type { PolicyLayer } from '../trust/policy.ts';
import type { ProfileLimit } from '../trust/effective.ts';
import { withToolSearch } from './context/request.ts';
import { learnFromOverflow, withAnswerRoom, type TurnModel } from './context/turn-fit.ts';
import { updateIndex } from './search-index.ts';
import type { SessionContext } from './session-context.ts';
import type { SessionDeps } from './session-deps.ts';
import type { SessionLog } from './session-log.ts';
import type { SessionPrompt, TurnPrompt } from './session-prompt.ts';
import { addUsage, isContextOverflow, streamStep, zeroUsage, type StepResult } from './step.ts';
import { runToolCalls, type TableFor, type ToolTable, type TurnIO } from './tool-calls.ts';
import { callIds } from './tool-pairs.ts';
import { snapshotAfter, snapshotBefore, type TurnSnapshot } from './turn-snapshots.ts';

/** What a turn keeps as it goes. */
interface TurnState extends TurnSnapshot {
  modelName: string;
  usage: Usage;
  steps: number;
  denied: string[];
  lastText: string;
  /** Tools `tool_search` loaded: sent whole for the rest of the turn. */
  loadedTools: Set<string>;
  /** The agent profile of this turn, the chain of profiles in force, a command's grants. */
  agent: AgentProfile;
  chain: ProfileLimit[];
  grants: PolicyLayer[];
  maxSteps: number;
  /** A Stop hook kept the model going once already (hooks are told, to avoid loops). */
  stopHookActive?: boolean;
  /** Why a UserPromptSubmit hook blocked the prompt. */
  blocked?: string;
}

/** What the turn loop needs of its session (the `Session` gives it). */
export interface TurnHost {
  readonly log: SessionLog;
  /** How deep in subagents the session is: 0 for one a front-end opened. */
  readonly depth: number;
  /** A step bound over the agent's and the config's (a task's `maxSteps`). */
  readonly stepLimit: number | undefined;
  readonly deps: Pick<
    SessionDeps,
    | 'config'
    | 'mcp'
    | 'tools'
    | 'approvals'
    | 'api'
    | 'windows'
    | 'snapshots'
    | 'sessionsDir'
    | 'lsp'
  >;
  readonly hooks: SessionHooks;
  readonly skills: SessionSkills;
  readonly context: SessionContext;
  readonly prompt: SessionPrompt;
  /** The tools of a step as the turn's agent sees them (`session-tools.ts`). */
  toolTable(
    chain: ProfileLimit[],
    params: PromptParams,
    model: TableFor['model'],
  ): Promise<ToolTable>;
  /** Told once the turn has ended, before its summary is returned: the session may run the next. */
  ended(): void;
}

/**
 * One turn: stream → tool calls → approvals → run (read-only calls in parallel, others in
 * order) → results → repeat until the model answers or `agent.maxSteps`. Every message is on
 * disk before the next step. Never throws for model or tool failures (they end up in the
 * summary).
 */
export class TurnLoop {
  readonly #turn: TurnState;

  constructor(
    private readonly host: TurnHost,
    private readonly plan: TurnPlan,
    private readonly params: PromptParams,
    private readonly io: TurnIO,
    private readonly signal: AbortSignal,
  ) {
    this.#turn = {
      number: ++host.log.turn,
      modelName: plan.modelName,
      usage: zeroUsage(),
      steps: 0,
      denied: [],
      lastText: '',
      loadedTools: new Set(),
      agent: plan.agent,
      chain: plan.chain,
      grants: plan.grants,
      maxSteps: host.stepLimit ?? plan.maxSteps,
    };
  }

  /** Runs the turn; `notices` are said (as warnings) once it has started: what it goes without. */
  async run(notices: string[]): Promise<TurnSummary> {
    const { host, io, signal } = this;
    const turn = this.#turn;
    const modelName = this.plan.modelName;
    host.log.diskError = undefined;
    try {
      const model = await host.context.turnModel(modelName);
      host.log.transcript.append({
        type: 'turn-start',
        time: new Date().toISOString(),
        turn: turn.number,
        model: modelName,
      });
      io.emit({ type: 'turn-start', turn: turn.number, model: modelName });
      for (const text of notices) io.emit({ type: 'notice', level: 'warn', text });
      if (!(await this.#submit(this.#turnText()))) return await this.#end('error', turn.blocked);
      return await this.#loop(model);
    } catch (error) {
      if (signal.aborted) return await this.#end('cancelled');
      // The error travels in the turn's summary, once (a notice as well showed it twice).
      return await this.#end('error', toWire(error).message);
    }
  }

  /** What the user's message of a turn says: `/skills NAME [request]` gives the skill with it. */
  #turnText(): string {
    const { plan } = this;
    if (!plan.skill) return plan.text;
    return this.host.skills.userTurn(plan.skill.name, plan.skill.request, plan.chain, this.io);
  }

  /** The turn's user message after SessionStart and UserPromptSubmit hooks; false if blocked. */
  async #submit(text: string): Promise<boolean> {
    const { host, io, signal } = this;
    await host.hooks.start(host.log.messages.length > 0, io, signal);
    const submitted = await host.hooks.prompt(text, io, signal);
    if (submitted.block) {
      this.#turn.blocked = `a UserPromptSubmit hook blocked the prompt: ${submitted.block}`;
      return false;
    }
    host.log.record({ role: 'user', content: submitted.text });
    return true;
  }

  /** After an answer: true when a Stop hook keeps the model going (its reason is sent). */
  async #keepGoing(): Promise<boolean> {
    const { host, io, signal } = this;
    const turn = this.#turn;
    if (turn.steps >= turn.maxSteps || !host.hooks.hasStop()) return false;
    const reason = await host.hooks.stop(turn.stopHookActive === true, io, signal);
    if (!reason || signal.aborted) return false;
    turn.stopHookActive = true;
    host.log.record({ role: 'user', content: `[a Stop hook says the work is not done] ${reason}` });
    return true;
  }

  /** Steps until the model answers, the turn is cancelled, or `agent.maxSteps`. */
  async #loop(model: TurnModel): Promise<TurnSummary> {
    const { host, params, io, signal } = this;
    const turn = this.#turn;
    const { maxSteps } = turn;
    const mcp = host.deps.mcp;
    // What the table was built from: a server's tools, the config (repository tools, agents).
    const basis = () => ({ tools: mcp.toolsVersion, config: host.deps.config() });
    let built = basis();
    let table = await host.toolTable(turn.chain, params, model);
    const skills = host.prompt.skillSection(turn.chain, table, model.contextWindow, io);
    const system = await host.prompt.system(table.size > 0, params, io, signal, turn.agent, skills);
    for (turn.steps = 1; turn.steps <= maxSteps; turn.steps++) {
      if (signal.aborted) return await this.#end('cancelled');
      // Everything so far is on disk before the model is asked again.
      await host.log.flush();
      // The tools of a server that became ready meanwhile join this request (rebuilt only then).
      const now = basis();
      if (
        turn.steps > 1 &&
        (now.tools === undefined || now.tools !== built.tools || now.config !== built.config)
      ) {
        for (const text of mcp.keptRevisionsSince?.(built.tools) ?? [])
          io.emit({ type: 'notice', level: 'info', text });
        built = now;
        table = await host.toolTable(turn.chain, params, model);
      }
      const { step, tools } = await this.#step(model, system, table);
      const outcome = await this.#afterStep(step, tools);
      if (outcome === 'answered' && (await this.#keepGoing())) continue;
      if (outcome) return await this.#end(outcome);
    }
    turn.steps = maxSteps;
    io.emit({
      type: 'notice',
      level: 'warn',
      text: `stopped after ${maxSteps} steps (${turn.agent.maxSteps ? `agent ${turn.agent.name}'s maxSteps` : host.depth > 0 ? 'agent.subagents.maxSteps' : 'agent.maxSteps'}); send "continue" to let the model go on`,
    });
    return await this.#end('max-steps');
  }

  /** Records what the model said and runs its calls; an outcome when the turn ends here. */
  async #afterStep(step: StepResult, table: ToolTable): Promise<TurnOutcome | undefined> {
    const { host, io, signal } = this;
    const turn = this.#turn;
    turn.usage = addUsage(turn.usage, step.usage);
    io.emit({ type: 'usage', usage: turn.usage });
    const calls = [...step.calls];
    if (step.text || step.reasoning || calls.length)
      host.log.record(
        {
          role: 'assistant',
          content: step.text,
          ...(step.reasoning ? { reasoning: step.reasoning } : {}),
          ...(calls.length ? { toolCalls: calls } : {}),
        },
        { model: turn.modelName, usage: step.usage },
      );
    if (step.text) turn.lastText = step.text;
    if (step.cancelled) {
      host.log.fillMissing(calls, 'the turn was cancelled before this call ran');
      return 'cancelled';
    }
    if (calls.length === 0) return 'answered';
    await snapshotBefore(host.deps.snapshots, host.log, turn, calls, table, io);
    const hooks = host.hooks.calls(io, signal);
    const { subagents } = host.deps.config().config.agent;
    const results = await runToolCalls(
      calls,
      subagentLimits(calls, step.invalid, table, { ...subagents, depth: host.depth }),
      table,
      this.#callContext(hooks),
      turn.denied,
    );
    for (const { call, result } of results)
      host.log.record({ role: 'tool', toolCallId: call.id, name: call.name, result });
    return signal.aborted ? 'cancelled' : undefined;
  }

  /** What the calls of a step run with: the session's stores, the turn's policy, hooks, LSP. */
  #callContext(hooks: ReturnType<SessionHooks['calls']>): Parameters<typeof runToolCalls>[3] {
    const { host, params, io, signal } = this;
    const turn = this.#turn;
    return {
      sessionId: host.log.id,
      tools: host.deps.tools,
      mcp: host.deps.mcp,
      approvals: host.deps.approvals,
      params,
      io,
      signal,
      scope: {
        config: host.deps.config(),
        chain: turn.chain,
        grants: turn.grants,
        skills: host.skills.grants(),
        consumer: { kind: 'model', yes: params.yes === true, interactive: params.interactive },
      },
      readOnlyPaths: host.skills.readOnlyPaths(),
      ...(hooks ? { hooks } : {}),
      ...(host.deps.lsp ? { lsp: host.deps.lsp.calls(() => turn.snapshot) } : {}),
    };
  }

  /**
   * One request to the model: its tools planned (deferred behind `tool_search` when many), the
   * conversation fitted to the window (compacting when it must), then streamed. A provider that
   * still finds it too long gets a compacted one again, twice at most.
   */
  async #step(
    model: TurnModel,
    system: TurnPrompt,
    table: ToolTable,
  ): Promise<{ step: StepResult; tools: ToolTable }> {
    const { host, io, signal } = this;
    const loaded = host.deps.config();
    const tools = withToolSearch(table, loaded, model.contextWindow, this.#turn.loadedTools);
    const calibration = host.deps.windows.calibrations.of(model);
    for (let attempt = 0; ; attempt++) {
      const fitted = await host.context.fit(model, system, tools.plan.offered, io, signal, false);
      try {
        const step = await streamStep(
          host.deps.api,
          {
            model: withAnswerRoom(model, fitted),
            messages: [{ role: 'system', content: fitted.system }, ...fitted.messages],
            tools: tools.plan.offered,
          },
          tools.table,
          io,
          signal,
          callIds(host.log.messages),
        );
        calibration.learn(fitted.estimated, step.usage);
        return { step, tools: tools.table };
      } catch (error) {
        if (attempt >= 2 || signal.aborted || !isContextOverflow(error)) throw error;
        // Its count, from the refusal, is what the next fitting holds to.
        learnFromOverflow(calibration, error, fitted, model.contextWindow);
        await host.hooks.preCompact('auto', io, signal);
        io.emit({
          type: 'notice',
          level: 'warn',
          text: `the model counted the request over its window; fitting it again by the model's count`,
        });
      }
    }
  }

  /** Ends the turn: its summary, its record in the transcript, the front-end told. */
  async #end(outcome: TurnOutcome, failure?: string): Promise<TurnSummary> {
    const { host, io } = this;
    const turn = this.#turn;
    let error = failure;
    await snapshotAfter(host.deps.snapshots, host.log, turn);
    const prices = host.deps.config().config.models[turn.modelName]?.prices;
    const { usage, steps, denied } = turn;
    const costUsd = prices
      ? (usage.inputTokens * prices.input + usage.outputTokens * prices.output) / 1e6
      : undefined;
    host.log.addTurn(usage, costUsd);
    const summary: TurnSummary = {
      outcome,
      text: turn.lastText,
      usage,
      steps,
      denied,
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(error ? { error } : {}),
    };
    host.log.transcript.append({
      type: 'turn-end',
      time: new Date().toISOString(),
      turn: turn.number,
      outcome,
      usage,
      steps,
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(error ? { error } : {}),
    });
    await host.log.flush();
    updateIndex(host.deps.sessionsDir, host.log.id, host.log.messages);
    if (host.log.diskError) {
      // The answer still reaches the user; the summary says the transcript is incomplete.
      error = [error, host.log.diskError].filter(Boolean).join('\n');
      summary.outcome = 'error';
      summary.error = error;
    }
    io.emit({ type: 'turn-end', summary });
    host.ended();
    return summary;
  }
}
