import type { ChatMessage, ModelSpec, ToolCall, Usage } from '../../workers/protocol/api.ts';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { NifflerError, toWire } from '../errors.ts';
import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import type { PromptParams, TurnOutcome, TurnSummary } from '../protocol.ts';
import { VERSION } from '../version.ts';
import type { ApprovalStore } from './approvals.ts';
import type { CompactionMarker } from './context/compaction.ts';
import { compactionMarkers, restoreClearedOutputs, saveClearedOutput } from './context/markers.ts';
import { ContextKeeper, type Fitted } from './context/keeper.ts';
import { buildSystemPrompt, type PromptOptions } from './context/prompt.ts';
import { contextReport, type ContextReport } from './context/report.ts';
import { withToolSearch } from './context/request.ts';
import type { SummaryModel } from './context/summary.ts';
import {
  answerReserve,
  learnFromOverflow,
  summaryModel,
  withAnswerRoom,
  type TurnModel,
} from './context/turn-fit.ts';
import type { ContextWindows } from './context/window.ts';
import type { SnapshotStore } from './snapshots.ts';
import {
  addUsage,
  isContextOverflow,
  streamStep,
  zeroUsage,
  type LlmStreamer,
  type StepResult,
} from './step.ts';
import {
  buildToolTable,
  runToolCalls,
  type BuiltinTools,
  type McpTools,
  type TableFor,
  type ToolTable,
  type TurnIO,
} from './tool-calls.ts';
import { callIds, NOT_RUN, pairToolResults } from './tool-pairs.ts';
import { newSessionId, readTranscript, Transcript, type TranscriptEntry } from './transcript.ts';
import type { AgentProfile } from '../extensions/agents.ts';
import { usableExtensions } from '../extensions/load.ts';
import {
  subagentResult,
  taskTool,
  type Semaphore,
  type SubagentRun,
} from '../extensions/subagents.ts';
import { savedChoices, subagentIo, type SessionOptions } from '../extensions/session-state.ts';
import {
  chainTools,
  DEFAULT_AGENT,
  findAgent,
  planTurn,
  profileLimit,
  type TurnPlan,
} from '../extensions/turn.ts';
import { approveSwitch, subagentLimits } from '../extensions/turn-calls.ts';
import type { CommandRunner } from '../extensions/expand.ts';
import { SessionHooks } from '../extensions/hook-points.ts';
import { SessionSkills } from '../extensions/skill-session.ts';
import { SKILL_TOOL } from '../extensions/skill-catalog.ts';
import { updateIndex } from './search-index.ts';
import { repoToolEntry } from '../extensions/repo-tools.ts';
import type { PolicyLayer } from '../trust/policy.ts';
import type { ProfileLimit } from '../trust/effective.ts';
import type { SessionLsp } from '../lsp/service.ts';

export type { BuiltinTools, McpTools, TurnIO } from './tool-calls.ts';

export interface SessionDeps {
  root: string;
  /** `$NIFFLER_HOME`: the user's own instruction files. */
  home: string;
  sessionsDir: string;
  api: LlmStreamer;
  tools: BuiltinTools;
  mcp: McpTools;
  approvals: ApprovalStore;
  config: () => LoadedConfig;
  resolveModel: (name: string) => ModelSpec;
  /** Context windows of models, asked of their providers once per daemon. */
  windows: ContextWindows;
  /** Where a cleared tool output is saved (the model may read it there). */
  outputsDir: string;
  /** This workspace's undo snapshots. */
  snapshots: SnapshotStore;
  /** MCP servers' instructions for the system prompt (trusted, ready servers). */
  instructions?: () => { server: string; text: string }[];
  /** How many subagents run at once in this daemon. */
  subagents?: Semaphore;
  /** Runs hooks, repository tools and `` !`cmd` `` in bash's sandbox (the tools pool). */
  runCommand?: CommandRunner;
  /** Language servers: the `lsp` tool, and diagnostics after edits (src/main/lsp/). */
  lsp?: SessionLsp;
}

const noCommands: CommandRunner = async () => fail('exec-failed', 'no command runner here');

/** What a turn keeps as it goes. */
interface TurnState {
  number: number;
  modelName: string;
  usage: Usage;
  steps: number;
  denied: string[];
  lastText: string;
  /** Tools `tool_search` loaded: sent whole for the rest of the turn. */
  loadedTools: Set<string>;
  /** The workspace's files before the turn's first call that could change them (undo). */
  snapshot?: string;
  /** Snapshots were tried and failed (said once). */
  noSnapshot?: boolean;
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

/** The system prompt of a turn, and how much of it is instruction files. */
interface TurnPrompt {
  text: string;
  instructionChars: number;
}

/** `agent.default`, or `build` while the config does not load. */
const defaultAgent = (deps: SessionDeps): string => {
  try {
    return deps.config().config.agent.default;
  } catch {
    return DEFAULT_AGENT; // The turn will say what is wrong with the config.
  }
};

/**
 * One conversation: its history, transcript and per-session tool switches. `prompt` runs a turn:
 * stream → tool calls → approvals → run (read-only calls in parallel, others in order) → results →
 * repeat until the model answers or `agent.maxSteps`. Every message is on disk before the next step.
 */
export class Session {
  readonly messages: ChatMessage[];
  readonly disabled = new Set<string>();
  /** The agent profile of this session's turns (`/agent`, `--agent`). */
  agent = DEFAULT_AGENT;
  /** How deep in subagents this session is: 0 for one a front-end opened. */
  depth = 0;
  /** A subagent's parent session (its hooks fire SubagentStart and SubagentStop). */
  parentId: string | undefined;
  /** A subagent's parents' profile chain: its turns are never wider than that. */
  inherited: ProfileLimit[] = [];
  /** A step bound over the agent's and the config's (a task's `maxSteps`). */
  stepLimit: number | undefined;
  /** What its turns have used, those read back from the transcript included. */
  usage: Usage = zeroUsage();
  costUsd = 0;
  /** The number of the last turn begun (transcript entries carry it). */
  #turn: number;
  /** The model of the last turn begun (what `/compact` and `/context` use unless told). */
  #lastModel: string | undefined;
  /** A subagent's: its parent turn's model, used unless its profile names one. */
  #parentModel: string | undefined;
  #ended = 0;
  #running = false;
  /** The prompt-file notices last shown, so each is said once. */
  #promptNotes = '';
  /** The first disk fault of this turn's transcript writes: the turn goes on, its summary says it. */
  #diskError: string | undefined;
  /** Compactions so far and the token calibration: what a request carries of the history. */
  readonly #context: ContextKeeper;
  /** The session's hook points (SessionStart … SessionEnd). */
  readonly hooks: SessionHooks;
  /** The skills it is offered and those it activated (their directories, their allowed-tools). */
  readonly skills: SessionSkills;

  private constructor(
    readonly id: string,
    private readonly deps: SessionDeps,
    private readonly transcript: Transcript,
    messages: ChatMessage[],
    turn: number,
    markers: CompactionMarker[] = [],
  ) {
    this.messages = messages;
    this.#turn = turn;
    this.hooks = new SessionHooks({
      sessionId: id,
      transcriptPath: transcript.file,
      root: deps.root,
      config: deps.config,
      run: deps.runCommand ?? noCommands,
      subagent: () => (this.depth > 0 ? { agent: this.agent, parentId: this.parentId } : undefined),
    });
    this.skills = new SessionSkills({
      root: deps.root,
      config: deps.config,
      record: (skill) =>
        this.transcript.append({
          type: 'skill',
          time: new Date().toISOString(),
          turn: this.#turn,
          ...skill,
        }),
    });
    this.#context = new ContextKeeper(
      { saveOutput: (callId, text) => this.#saveOutput(callId, text) },
      markers,
    );
  }

  /** Saves a cleared tool output where the model can read it again. */
  #saveOutput(callId: string, text: string): string {
    return saveClearedOutput(this.deps.outputsDir, this.id, callId, text);
  }

  /** The model that writes summaries: `agent.compaction.model`, else the turn's own. */
  async #summarizer(model: TurnModel): Promise<SummaryModel> {
    const name = this.deps.config().config.agent.compaction.model;
    const chosen = name && name !== model.name ? await this.#turnModel(name) : model;
    return summaryModel(chosen, this.deps.windows.calibrations.of(chosen), this.deps.api);
  }

  static create(deps: SessionDeps, options: SessionOptions = {}): Session {
    const id = newSessionId();
    const transcript = Transcript.open(deps.sessionsDir, id);
    transcript.append({
      type: 'session',
      id,
      root: deps.root,
      createdAt: new Date().toISOString(),
      version: VERSION,
      ...(options.parent
        ? { parent: { id: options.parent.id, callId: options.parent.callId } }
        : {}),
      ...(options.task ? { task: options.task } : {}),
    });
    const session = new Session(id, deps, transcript, [], 0);
    session.depth = options.parent ? options.parent.depth + 1 : 0;
    session.parentId = options.parent?.id;
    session.inherited = options.parent?.chain ?? [];
    session.stepLimit = options.maxSteps;
    session.setAgent(options.agent ?? defaultAgent(deps));
    if (options.disabled?.length) for (const name of options.disabled) session.toggle(name, false);
    return session;
  }

  /** Runs this session's turns with the profile `name` from now on (recorded in the transcript). */
  setAgent(name: string): void {
    if (name === this.agent && this.#turn > 0) return;
    this.agent = name;
    this.transcript.append({
      type: 'agent',
      time: new Date().toISOString(),
      turn: this.#turn,
      agent: name,
    });
  }

  /** Switches a server or tool off (or on) for this session; the choice is in the transcript. */
  toggle(name: string, enabled: boolean): string[] {
    if (enabled) this.disabled.delete(name);
    else this.disabled.add(name);
    const disabled = [...this.disabled];
    this.transcript.append({
      type: 'tools',
      time: new Date().toISOString(),
      turn: this.#turn,
      disabled,
    });
    return disabled;
  }

  /**
   * Reopens a session from its transcript: torn lines skipped, calls left without a result by a
   * session that ended mid-turn answered as not run (saved, and said in `warnings`).
   */
  static resume(deps: SessionDeps, id: string): { session: Session; warnings: string[] } {
    const loaded = readTranscript(deps.sessionsDir, id);
    // Numbered on from the highest turn written: a turn that failed before its start was written
    // still has its end there.
    const lastTurn = Math.max(0, ...loaded.entries.map((e) => ('turn' in e ? e.turn : 0)));
    const paired = pairToolResults(loaded.messages);
    const transcript = Transcript.open(deps.sessionsDir, id);
    const { markers, broken } = compactionMarkers(loaded.entries);
    const session = new Session(id, deps, transcript, paired.messages, lastTurn, markers);
    const restored = restoreClearedOutputs(markers, paired.messages, (callId, text) =>
      session.#saveOutput(callId, text),
    );
    if (restored.marker) {
      markers.push(restored.marker);
      session.#recordCompaction(restored.marker);
    }
    const saved = savedChoices(loaded.entries);
    session.#lastModel = loaded.entries.findLast((e) => e.type === 'turn-start')?.model;
    if (saved.agent) session.agent = saved.agent;
    for (const name of saved.disabled) session.disabled.add(name);
    session.depth = saved.depth;
    session.skills.restore(loaded.entries);
    const time = new Date().toISOString();
    for (const message of paired.added)
      transcript.append({ type: 'message', time, turn: lastTurn, message });
    session.#countSpent(loaded.entries);
    const warnings = [...loaded.warnings];
    if (paired.added.length)
      warnings.push(
        `${paired.added.map((m) => m.name).join(', ')}: ${NOT_RUN} (the daemon stopped mid-turn); the model is told so`,
      );
    if (paired.dropped)
      warnings.push(`${paired.dropped} tool result(s) without their call were left out`);
    warnings.push(...restored.warnings);
    if (broken)
      warnings.push(
        `${broken} compaction record(s) of this session could not be read and were skipped: the messages they compacted are sent whole again (the next compaction makes up for it)`,
      );
    return { session, warnings };
  }

  /**
   * A new session going on from the end of turn `atTurn` of session `id`: its transcript is a copy
   * of the old one up to there, so what came later — answers, a compaction — is not in it (this is
   * how a compaction is undone). The old session is left as it was.
   */
  static async fork(
    deps: SessionDeps,
    id: string,
    atTurn: number,
  ): Promise<{ session: Session; warnings: string[] }> {
    const loaded = readTranscript(deps.sessionsDir, id);
    const turns = [
      ...new Set(loaded.entries.flatMap((e) => ('turn' in e && e.turn > 0 ? [e.turn] : []))),
    ];
    if (!turns.includes(atTurn))
      throw new NifflerError(
        'usage',
        `session ${id} has no turn ${atTurn}; its turns are ${turns.join(', ') || 'none'}`,
      );
    const forked = newSessionId();
    const transcript = Transcript.open(deps.sessionsDir, forked);
    transcript.append({
      type: 'session',
      id: forked,
      root: deps.root,
      createdAt: new Date().toISOString(),
      version: VERSION,
      forkedFrom: { id, turn: atTurn },
    });
    // Up to the end of that turn: what was written after it (a /compact, later turns) stays out.
    for (const entry of loaded.entries) {
      if (entry.type === 'session' || entry.turn > atTurn) continue;
      transcript.append(entry);
      if (entry.type === 'turn-end' && entry.turn === atTurn) break;
    }
    await transcript.close();
    const opened = Session.resume(deps, forked);
    return {
      session: opened.session,
      warnings: [`forked from ${id} at turn ${atTurn}`, ...opened.warnings],
    };
  }

  /** Adds up what the turns in `entries` used. */
  #countSpent(entries: TranscriptEntry[]): void {
    const ended = new Set<number>();
    for (const entry of entries) if (entry.type === 'turn-end') ended.add(entry.turn);
    for (const entry of entries) {
      if (entry.type === 'turn-end') {
        this.usage = addUsage(this.usage, entry.usage);
        this.costUsd += entry.costUsd ?? 0;
        this.#ended++;
      } else if (entry.type === 'message' && entry.usage && !ended.has(entry.turn)) {
        // A turn cut short (the daemon was killed): what its finished steps used.
        this.usage = addUsage(this.usage, entry.usage);
      }
    }
  }

  /** Turns that ended in this session, in this run or earlier ones. */
  get turns(): number {
    return this.#ended;
  }

  /** Closes the transcript once what was appended is written. */
  close(): Promise<void> {
    return this.transcript.close();
  }

  /** Resolves once what was recorded so far is on disk (a disk fault is kept, not thrown). */
  saved(): Promise<void> {
    return this.#flush();
  }

  /** Waits for the transcript's writes; a disk fault is kept for the turn's summary, not thrown. */
  async #flush(): Promise<void> {
    try {
      await this.transcript.flushed();
    } catch (error) {
      this.#diskError ??= (error as Error).message;
    }
  }

  #record(message: ChatMessage, extra: { model?: string; usage?: Usage } = {}): void {
    this.messages.push(message);
    this.transcript.append({
      type: 'message',
      time: new Date().toISOString(),
      turn: this.#turn,
      message,
      ...extra,
    });
  }

  /**
   * Runs one turn; never throws for model or tool failures (they end up in the summary).
   * `notices` are said (as warnings) once the turn has started: what it goes without.
   */
  async prompt(
    params: PromptParams,
    io: TurnIO,
    signal: AbortSignal,
    notices: string[] = [],
  ): Promise<TurnSummary> {
    if (this.#running)
      throw new NifflerError(
        'usage',
        `session ${this.id} is already running a turn; wait for it or cancel it`,
      );
    // Read before taking the session: a config that does not load fails this prompt only.
    const loaded = this.deps.config();
    this.#running = true;
    let plan: TurnPlan;
    try {
      plan = await planTurn({
        loaded,
        agent: this.agent,
        inherited: this.inherited,
        text: params.text,
        ...(params.model ? { model: params.model } : {}),
        ...(this.#parentModel ? { fallbackModel: this.#parentModel } : {}),
        depth: this.depth,
        approveSwitch: (command, reason) =>
          approveSwitch(this.id, params, io, signal, command, reason),
        consumer: { kind: 'model', yes: params.yes === true, interactive: params.interactive },
        run: this.deps.runCommand ?? noCommands,
        excluded: [this.deps.home],
        signal,
      });
      if (plan.skill) this.skills.find(plan.skill.name, plan.chain); // unknown: no turn starts
    } catch (error) {
      this.#running = false;
      throw error;
    }
    const turn = this.#newTurn(plan);
    const modelName = plan.modelName;
    this.#lastModel = modelName;
    notices = [...notices, ...plan.notices];
    this.#diskError = undefined;
    try {
      const model = await this.#turnModel(modelName);
      this.transcript.append({
        type: 'turn-start',
        time: new Date().toISOString(),
        turn: turn.number,
        model: modelName,
      });
      io.emit({ type: 'turn-start', turn: turn.number, model: modelName });
      for (const text of notices) io.emit({ type: 'notice', level: 'warn', text });
      if (!(await this.#submit(turn, this.#turnText(plan, io), io, signal)))
        return await this.#end(turn, 'error', io, turn.blocked);
      return await this.#loop(turn, model, params, io, signal);
    } catch (error) {
      if (signal.aborted) return await this.#end(turn, 'cancelled', io);
      // The error travels in the turn's summary, once (a notice as well showed it twice).
      return await this.#end(turn, 'error', io, toWire(error).message);
    }
  }

  /** What the user's message of a turn says: `/skills NAME [request]` gives the skill with it. */
  #turnText(plan: TurnPlan, io: TurnIO): string {
    if (!plan.skill) return plan.text;
    return this.skills.userTurn(plan.skill.name, plan.skill.request, plan.chain, io);
  }

  /** The state of the next turn, as its plan (model, agent, policy, steps) says. */
  #newTurn(plan: TurnPlan): TurnState {
    return {
      number: ++this.#turn,
      modelName: plan.modelName,
      usage: zeroUsage(),
      steps: 0,
      denied: [],
      lastText: '',
      loadedTools: new Set(),
      agent: plan.agent,
      chain: plan.chain,
      grants: plan.grants,
      maxSteps: this.stepLimit ?? plan.maxSteps,
    };
  }

  /** The turn's user message after SessionStart and UserPromptSubmit hooks; false if blocked. */
  async #submit(turn: TurnState, text: string, io: TurnIO, signal: AbortSignal): Promise<boolean> {
    await this.hooks.start(this.messages.length > 0, io, signal);
    const submitted = await this.hooks.prompt(text, io, signal);
    if (submitted.block) {
      turn.blocked = `a UserPromptSubmit hook blocked the prompt: ${submitted.block}`;
      return false;
    }
    this.#record({ role: 'user', content: submitted.text });
    return true;
  }

  /** After an answer: true when a Stop hook keeps the model going (its reason is sent). */
  async #keepGoing(turn: TurnState, io: TurnIO, signal: AbortSignal): Promise<boolean> {
    if (turn.steps >= turn.maxSteps || !this.hooks.hasStop()) return false;
    const reason = await this.hooks.stop(turn.stopHookActive === true, io, signal);
    if (!reason || signal.aborted) return false;
    turn.stopHookActive = true;
    this.#record({ role: 'user', content: `[a Stop hook says the work is not done] ${reason}` });
    return true;
  }

  /** Steps until the model answers, the turn is cancelled, or `agent.maxSteps`. */
  async #loop(
    turn: TurnState,
    model: TurnModel,
    params: PromptParams,
    io: TurnIO,
    signal: AbortSignal,
  ): Promise<TurnSummary> {
    const { maxSteps } = turn;
    const mcp = this.deps.mcp;
    // What the table was built from: a server's tools, the config (repository tools, agents).
    const basis = () => ({ tools: mcp.toolsVersion, config: this.deps.config() });
    let built = basis();
    let table = await this.#toolTable(turn.chain, params, model);
    const skills = this.#skillSection(turn, table, model.contextWindow, io);
    const system = await this.#systemPrompt(table.size > 0, params, io, signal, turn.agent, skills);
    for (turn.steps = 1; turn.steps <= maxSteps; turn.steps++) {
      if (signal.aborted) return await this.#end(turn, 'cancelled', io);
      // Everything so far is on disk before the model is asked again.
      await this.#flush();
      // The tools of a server that became ready meanwhile join this request (rebuilt only then).
      const now = basis();
      if (
        turn.steps > 1 &&
        (now.tools === undefined || now.tools !== built.tools || now.config !== built.config)
      ) {
        for (const text of mcp.keptRevisionsSince?.(built.tools) ?? [])
          io.emit({ type: 'notice', level: 'info', text });
        built = now;
        table = await this.#toolTable(turn.chain, params, model);
      }
      const { step, tools } = await this.#step(turn, model, system, table, io, signal);
      const outcome = await this.#afterStep(turn, step, tools, params, io, signal);
      if (outcome === 'answered' && (await this.#keepGoing(turn, io, signal))) continue;
      if (outcome) return await this.#end(turn, outcome, io);
    }
    turn.steps = maxSteps;
    io.emit({
      type: 'notice',
      level: 'warn',
      text: `stopped after ${maxSteps} steps (${turn.agent.maxSteps ? `agent ${turn.agent.name}'s maxSteps` : this.depth > 0 ? 'agent.subagents.maxSteps' : 'agent.maxSteps'}); send "continue" to let the model go on`,
    });
    return await this.#end(turn, 'max-steps', io);
  }

  /** Records what the model said and runs its calls; an outcome when the turn ends here. */
  async #afterStep(
    turn: TurnState,
    step: StepResult,
    table: ToolTable,
    params: PromptParams,
    io: TurnIO,
    signal: AbortSignal,
  ): Promise<TurnOutcome | undefined> {
    turn.usage = addUsage(turn.usage, step.usage);
    io.emit({ type: 'usage', usage: turn.usage });
    const calls = [...step.calls];
    if (step.text || step.reasoning || calls.length)
      this.#record(
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
      this.#fillMissing(calls, 'the turn was cancelled before this call ran');
      return 'cancelled';
    }
    if (calls.length === 0) return 'answered';
    await this.#snapshotBefore(turn, calls, table, io);
    const hooks = this.hooks.calls(io, signal);
    const { subagents } = this.deps.config().config.agent;
    const results = await runToolCalls(
      calls,
      subagentLimits(calls, step.invalid, table, { ...subagents, depth: this.depth }),
      table,
      {
        sessionId: this.id,
        tools: this.deps.tools,
        mcp: this.deps.mcp,
        approvals: this.deps.approvals,
        params,
        io,
        signal,
        scope: {
          config: this.deps.config(),
          chain: turn.chain,
          grants: turn.grants,
          skills: this.skills.grants(),
          consumer: { kind: 'model', yes: params.yes === true, interactive: params.interactive },
        },
        readOnlyPaths: this.skills.readOnlyPaths(),
        ...(hooks ? { hooks } : {}),
        ...(this.deps.lsp ? { lsp: this.deps.lsp.calls(() => turn.snapshot) } : {}),
      },
      turn.denied,
    );
    for (const { call, result } of results)
      this.#record({ role: 'tool', toolCallId: call.id, name: call.name, result });
    return signal.aborted ? 'cancelled' : undefined;
  }

  /**
   * One request to the model: its tools planned (deferred behind `tool_search` when many), the
   * conversation fitted to the window (compacting when it must), then streamed. A provider that
   * still finds it too long gets a compacted one again, twice at most.
   */
  async #step(
    turn: TurnState,
    model: TurnModel,
    system: TurnPrompt,
    table: ToolTable,
    io: TurnIO,
    signal: AbortSignal,
  ): Promise<{ step: StepResult; tools: ToolTable }> {
    const loaded = this.deps.config();
    const tools = withToolSearch(table, loaded, model.contextWindow, turn.loadedTools);
    const calibration = this.deps.windows.calibrations.of(model);
    for (let attempt = 0; ; attempt++) {
      const fitted = await this.#fit(model, system, tools.plan.offered, io, signal, false);
      try {
        const step = await streamStep(
          this.deps.api,
          {
            model: withAnswerRoom(model, fitted),
            messages: [{ role: 'system', content: fitted.system }, ...fitted.messages],
            tools: tools.plan.offered,
          },
          tools.table,
          io,
          signal,
          callIds(this.messages),
        );
        calibration.learn(fitted.estimated, step.usage);
        return { step, tools: tools.table };
      } catch (error) {
        if (attempt >= 2 || signal.aborted || !isContextOverflow(error)) throw error;
        // Its count, from the refusal, is what the next fitting holds to.
        learnFromOverflow(calibration, error, fitted, model.contextWindow);
        await this.hooks.preCompact('auto', io, signal);
        io.emit({
          type: 'notice',
          level: 'warn',
          text: `the model counted the request over its window; fitting it again by the model's count`,
        });
      }
    }
  }

  /** Fits the conversation to the window, records what compaction did, and says what it weighs. */
  async #fit(
    model: TurnModel,
    system: TurnPrompt,
    tools: Parameters<ContextKeeper['view']>[0]['tools'],
    io: TurnIO,
    signal: AbortSignal,
    force: boolean,
    focus?: string,
  ): Promise<Fitted> {
    const { threshold } = this.deps.config().config.agent.compaction;
    const fitted = await this.#context.fit(
      {
        history: this.messages,
        system: system.text,
        instructionChars: system.instructionChars,
        tools,
      },
      {
        window: model.contextWindow,
        reserve: answerReserve(model),
        threshold,
        calibration: this.deps.windows.calibrations.of(model),
        model: model.name,
        summarizer: await this.#summarizer(model),
        signal,
        ...(force ? { force: focus ? { focus } : {} } : {}),
      },
    );
    for (const marker of fitted.compactions) this.#recordCompaction(marker);
    for (const text of fitted.notes) io.emit({ type: 'notice', level: 'info', text });
    io.emit({ type: 'context', use: fitted.use, window: model.contextWindow });
    return fitted;
  }

  #recordCompaction(marker: CompactionMarker): void {
    this.transcript.append({
      type: 'compaction',
      time: new Date().toISOString(),
      turn: this.#turn,
      marker,
    });
  }

  /** The model of a turn, with its context window (from the config, the provider, or a default). */
  async #turnModel(name: string): Promise<TurnModel> {
    const model = this.deps.resolveModel(name);
    const configured = this.deps.config().config.models[name]?.contextWindow;
    const { tokens } = await this.deps.windows.resolve(model, configured);
    return { ...model, contextWindow: tokens };
  }

  /**
   * Before the first call of a turn that may change files, the workspace is snapshotted, so
   * `/undo` can put back what the turn changes — by any tool, bash included.
   */
  async #snapshotBefore(
    turn: TurnState,
    calls: ToolCall[],
    table: ToolTable,
    io: TurnIO,
  ): Promise<void> {
    if (turn.snapshot || turn.noSnapshot) return;
    if (!calls.some((c) => table.get(c.name) && !table.get(c.name)!.readOnly)) return;
    const taken = await this.deps.snapshots.take(`before turn ${turn.number} of ${this.id}`);
    if (!taken.ok) {
      turn.noSnapshot = true;
      io.emit({ type: 'notice', level: 'warn', text: `no undo for this turn: ${taken.reason}` });
      return;
    }
    turn.snapshot = taken.commit;
    const skipped = taken.skipped.length ? { skipped: taken.skipped } : {};
    if (taken.skipped.length)
      io.emit({
        type: 'notice',
        level: 'info',
        text: `undo will not cover ${taken.skipped.length} large untracked file(s): ${taken.skipped.slice(0, 3).join(', ')}${taken.skipped.length > 3 ? ', …' : ''}`,
      });
    this.transcript.append({
      type: 'snapshot',
      time: new Date().toISOString(),
      turn: turn.number,
      before: taken.commit,
      ...skipped,
    });
  }

  /** After a turn that snapshotted its start: the files as it left them. */
  async #snapshotAfter(turn: TurnState): Promise<void> {
    if (!turn.snapshot) return;
    const taken = await this.deps.snapshots.take(
      `after turn ${turn.number} of ${this.id}`,
      turn.snapshot,
    );
    if (taken.ok)
      this.transcript.append({
        type: 'snapshot',
        time: new Date().toISOString(),
        turn: turn.number,
        before: turn.snapshot,
        after: taken.commit,
      });
  }

  /** Ends the turn: its summary, its record in the transcript, the front-end told. */
  async #end(
    turn: TurnState,
    outcome: TurnOutcome,
    io: TurnIO,
    failure?: string,
  ): Promise<TurnSummary> {
    let error = failure;
    await this.#snapshotAfter(turn);
    const prices = this.deps.config().config.models[turn.modelName]?.prices;
    const { usage, steps, denied } = turn;
    const costUsd = prices
      ? (usage.inputTokens * prices.input + usage.outputTokens * prices.output) / 1e6
      : undefined;
    this.usage = addUsage(this.usage, usage);
    if (costUsd !== undefined) this.costUsd += costUsd;
    this.#ended++;
    const summary: TurnSummary = {
      outcome,
      text: turn.lastText,
      usage,
      steps,
      denied,
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(error ? { error } : {}),
    };
    this.transcript.append({
      type: 'turn-end',
      time: new Date().toISOString(),
      turn: turn.number,
      outcome,
      usage,
      steps,
      ...(costUsd !== undefined ? { costUsd } : {}),
      ...(error ? { error } : {}),
    });
    await this.#flush();
    updateIndex(this.deps.sessionsDir, this.id, this.messages);
    if (this.#diskError) {
      // The answer still reaches the user; the summary says the transcript is incomplete.
      error = [error, this.#diskError].filter(Boolean).join('\n');
      summary.outcome = 'error';
      summary.error = error;
    }
    io.emit({ type: 'turn-end', summary });
    this.#running = false;
    return summary;
  }

  /**
   * Compacts now (`/compact [focus]`): clears old tool outputs and summarizes the older turns,
   * whatever the size. Returns what was done.
   */
  async compact(focus: string | undefined, io: TurnIO, signal: AbortSignal): Promise<string[]> {
    if (this.#running)
      throw new NifflerError('usage', `session ${this.id} is running a turn; compact it after`);
    this.#running = true;
    try {
      const model = await this.#turnModel(this.#lastModel ?? this.deps.config().config.model);
      const table = await buildToolTable(this.deps.tools, this.deps.mcp, this.disabled, {
        model,
        config: this.deps.config(),
      });
      const system = await this.#systemPrompt(
        table.size > 0,
        { sessionId: this.id, text: '', interactive: true },
        io,
        signal,
      );
      const tools = withToolSearch(table, this.deps.config(), model.contextWindow, new Set());
      await this.hooks.preCompact('manual', io, signal);
      const fitted = await this.#fit(model, system, tools.plan.offered, io, signal, true, focus);
      await this.#flush();
      return fitted.notes.length
        ? fitted.notes
        : ['nothing to compact yet: the conversation is too short'];
    } finally {
      this.#running = false;
    }
  }

  /**
   * The system prompt, with the repository's prompt files only while it is trusted; says once
   * per session what was left out and why.
   */
  async #systemPrompt(
    hasTools: boolean,
    params: PromptParams,
    io: TurnIO,
    signal: AbortSignal,
    agent?: AgentProfile,
    skills?: string,
  ): Promise<TurnPrompt> {
    const prompt = await buildSystemPrompt({
      ...this.#promptOptions(hasTools, params, signal, agent),
      ...(skills ? { skills } : {}),
    });
    const notes = [
      ...(prompt.untrusted.length
        ? [
            `${prompt.untrusted.join(', ')} not given to the model: this repository is not trusted (review with niffler trust --diff, then niffler trust)`,
          ]
        : []),
      ...prompt.refused.map(({ file, why }) => `${file} not given to the model: it ${why}`),
      ...prompt.cut.map((file) => `${file} given to the model in part: cut at the instruction limits`),
    ];
    const key = notes.join('\n');
    if (key && key !== this.#promptNotes)
      for (const text of notes) io.emit({ type: 'notice', level: 'warn', text });
    this.#promptNotes = key;
    return { text: prompt.text, instructionChars: prompt.instructionChars };
  }

  /** How the system prompt of a turn with these tools and this agent is built. */
  #promptOptions(
    hasTools: boolean,
    params: Pick<PromptParams, 'cwd'>,
    signal: AbortSignal,
    agent?: AgentProfile,
  ): PromptOptions {
    const loaded = this.deps.config();
    return {
      root: this.deps.root,
      ...(params.cwd ? { cwd: params.cwd } : {}),
      home: this.deps.home,
      hasTools,
      trusted: loaded.trust.level === 'trusted',
      git: loaded.config.agent.git,
      instructions: this.deps.instructions?.() ?? [],
      ...(agent?.prompt ? { agent: { name: agent.name, prompt: agent.prompt } } : {}),
      ...(this.hooks.context.length ? { hookContext: this.hooks.context } : {}),
      signal,
    };
  }

  /**
   * What the next request of this session holds, part by part, without sending it (`/context`,
   * `niffler sessions show ID --context`): on `model` (default: the last turn's), with the
   * session's agent, tools and compactions as they stand.
   */
  async contextReport(
    params: { model?: string; cwd?: string },
    signal: AbortSignal,
  ): Promise<ContextReport> {
    const loaded = this.deps.config();
    const name = params.model ?? this.#lastModel ?? loaded.config.model;
    const model = await this.#turnModel(name);
    const agent = findAgent(usableExtensions(loaded).extensions, this.agent);
    const asked = { sessionId: this.id, text: '', interactive: false, ...params };
    const chain = [...this.inherited, profileLimit(agent)];
    const table = await this.#toolTable(chain, asked, model);
    const skills = table.has(SKILL_TOOL)
      ? this.skills.section(chain, model.contextWindow)
      : undefined;
    const prompt = await buildSystemPrompt({
      ...this.#promptOptions(table.size > 0, asked, signal, agent),
      ...(skills ? { skills } : {}),
    });
    const tools = withToolSearch(table, loaded, model.contextWindow, new Set());
    const calibration = this.deps.windows.calibrations.of(model);
    await this.#flush();
    return contextReport({
      sessionId: this.id,
      agent: agent.name,
      model: name,
      window: await this.deps.windows.resolve(model, loaded.config.models[name]?.contextWindow),
      reserve: answerReserve(model),
      threshold: loaded.config.agent.compaction.threshold,
      calibration,
      prompt: prompt.parts,
      view: this.#context.view(
        {
          history: this.messages,
          system: prompt.text,
          instructionChars: prompt.instructionChars,
          tools: tools.plan.offered,
        },
        calibration.scale,
      ),
      plan: tools.plan,
      history: this.messages,
      markers: this.#context.markers,
      entries: readTranscript(this.deps.sessionsDir, this.id).entries,
    });
  }

  /**
   * The tools of a step: built-ins and ready servers' less what this session switched off, as
   * the turn's agent sees them, with `task` while subagents may nest deeper.
   */
  async #toolTable(
    chain: ProfileLimit[],
    params: PromptParams,
    model: TableFor['model'],
  ): Promise<ToolTable> {
    const loaded = this.deps.config();
    const base = await buildToolTable(this.deps.tools, this.deps.mcp, this.disabled, {
      model,
      config: loaded,
    });
    const { subagents } = loaded.config.agent;
    const usable = usableExtensions(loaded);
    const children = usable.extensions.agents.filter((a) => a.mode !== 'primary');
    if (this.depth < subagents.maxDepth && children.length && !this.disabled.has('task'))
      base.set(
        'task',
        taskTool(children, (job) => this.#runChild(job, params, chain, model.name)),
      );
    for (const [name, entry] of this.deps.lsp?.tools(this.disabled) ?? []) base.set(name, entry);
    const run = this.deps.runCommand ?? noCommands;
    for (const tool of usable.extensions.tools)
      if (!this.disabled.has(tool.name) && !this.disabled.has('repo') && !base.has(tool.name))
        base.set(
          tool.name,
          repoToolEntry(tool, run, this.deps.root, () =>
            usableExtensions(this.deps.config()).extensions.tools.find((t) => t.name === tool.name),
          ),
        );
    const table = chainTools(base, chain);
    // Skills follow the profile's `skills:` list, not its `tools:`.
    const skill = this.skills.tool(chain);
    if (skill && !this.disabled.has(SKILL_TOOL) && !table.has(SKILL_TOOL))
      table.set(SKILL_TOOL, skill);
    return table;
  }

  /** The Skills section of a turn's system prompt (when it has the skill tool); says once what was skipped. */
  #skillSection(turn: TurnState, table: ToolTable, window: number, io: TurnIO): string | undefined {
    for (const text of this.skills.notices()) io.emit({ type: 'notice', level: 'warn', text });
    return table.has(SKILL_TOOL) ? this.skills.section(turn.chain, window) : undefined;
  }

  /** Runs a subagent's job in a child session; the parent's transcript records the child. */
  async #runChild(
    job: SubagentRun,
    params: PromptParams,
    chain: ProfileLimit[],
    model: string,
  ): Promise<ToolResult> {
    const run = async () => {
      // Never wider than this turn: its profile chain, and what this session switched off.
      const child = Session.create(this.deps, {
        agent: job.agent.name,
        parent: { id: this.id, callId: job.callId, depth: this.depth, chain },
        disabled: [...this.disabled],
      });
      child.#parentModel = model;
      this.transcript.append({
        type: 'child',
        time: new Date().toISOString(),
        turn: this.#turn,
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
      return await (this.deps.subagents ? this.deps.subagents.use(run, job.signal) : run());
    } catch (error) {
      return fail('canceled', (error as Error).message);
    }
  }

  /** Answers calls that never ran, so every tool call in the history has its result. */
  #fillMissing(calls: ToolCall[], why: string): void {
    const answered = new Set(
      this.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])),
    );
    for (const call of calls)
      if (!answered.has(call.id))
        this.#record({
          role: 'tool',
          toolCallId: call.id,
          name: call.name,
          result: fail('canceled', why),
        });
  }
}
