import type { ChatMessage, Usage } from '../../workers/protocol/api.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import { NifflerError } from '../errors.ts';
import type { PromptParams, TurnSummary } from '../protocol.ts';
import { VERSION } from '../version.ts';
import type { CompactionMarker } from './context/compaction.ts';
import { restoreClearedOutputs } from './context/markers.ts';
import type { ContextReport } from './context/report.ts';
import { withToolSearch } from './context/request.ts';
import { buildToolTable, type TableFor, type ToolTable, type TurnIO } from './tool-calls.ts';
import { newSessionId, Transcript } from './transcript.ts';
import { usableExtensions } from '../extensions/load.ts';
import type { SubagentRun } from '../extensions/subagents.ts';
import { savedChoices, type SessionOptions } from '../extensions/session-state.ts';
import {
  DEFAULT_AGENT,
  findAgent,
  planTurn,
  profileLimit,
  type TurnPlan,
} from '../extensions/turn.ts';
import { approveSwitch } from '../extensions/turn-calls.ts';
import { SessionHooks } from '../extensions/hook-points.ts';
import { SessionSkills } from '../extensions/skill-session.ts';
import { SKILL_TOOL } from '../extensions/skill-catalog.ts';
import type { ProfileLimit } from '../trust/effective.ts';
import { SessionContext } from './session-context.ts';
import { defaultAgent, noCommands, type SessionDeps } from './session-deps.ts';
import { SessionLog } from './session-log.ts';
import { forkTranscript, reopenTranscript, resumeWarnings } from './session-open.ts';
import { SessionPrompt } from './session-prompt.ts';
import { sessionToolTable } from './session-tools.ts';
import { runSubagent, type SubagentParent } from './subagent-run.ts';
import { TurnLoop, type TurnHost } from './turn-loop.ts';

/**
 * One conversation: its history, transcript and per-session tool switches. `prompt` runs a turn
 * (the loop of `turn-loop.ts`); its parts are each a module: the record (`session-log.ts`), the
 * context and compaction (`session-context.ts`), the system prompt and skills section
 * (`session-prompt.ts`), the tool table (`session-tools.ts`), subagents (`subagent-run.ts`),
 * resume and fork (`session-open.ts`), undo snapshots (`turn-snapshots.ts`).
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
  /** The model of the last turn begun (what `/compact` and `/context` use unless told). */
  #lastModel: string | undefined;
  /** A subagent's: its parent turn's model, used unless its profile names one. */
  #parentModel: string | undefined;
  #running = false;
  /** Its messages, transcript, turn number and what its turns used. */
  readonly #log: SessionLog;
  /** Compactions so far and the token calibration: what a request carries of the history. */
  readonly #context: SessionContext;
  readonly #prompt: SessionPrompt;
  /** The session's hook points (SessionStart … SessionEnd). */
  readonly hooks: SessionHooks;
  /** The skills it is offered and those it activated (their directories, their allowed-tools). */
  readonly skills: SessionSkills;

  private constructor(
    readonly id: string,
    private readonly deps: SessionDeps,
    transcript: Transcript,
    messages: ChatMessage[],
    turn: number,
    markers: CompactionMarker[] = [],
  ) {
    this.messages = messages;
    this.#log = new SessionLog(id, transcript, messages, turn);
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
        transcript.append({
          type: 'skill',
          time: new Date().toISOString(),
          turn: this.#log.turn,
          ...skill,
        }),
    });
    this.#context = new SessionContext(deps, this.#log, markers);
    this.#prompt = new SessionPrompt(deps, this.hooks, this.skills);
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
    if (name === this.agent && this.#log.turn > 0) return;
    this.agent = name;
    this.#log.transcript.append({
      type: 'agent',
      time: new Date().toISOString(),
      turn: this.#log.turn,
      agent: name,
    });
  }

  /** Switches a server or tool off (or on) for this session; the choice is in the transcript. */
  toggle(name: string, enabled: boolean): string[] {
    if (enabled) this.disabled.delete(name);
    else this.disabled.add(name);
    const disabled = [...this.disabled];
    this.#log.transcript.append({
      type: 'tools',
      time: new Date().toISOString(),
      turn: this.#log.turn,
      disabled,
    });
    return disabled;
  }

  /**
   * Reopens a session from its transcript: torn lines skipped, calls left without a result by a
   * session that ended mid-turn answered as not run (saved, and said in `warnings`).
   */
  static resume(deps: SessionDeps, id: string): { session: Session; warnings: string[] } {
    const reopened = reopenTranscript(deps.sessionsDir, id);
    const { loaded, lastTurn, paired, transcript, markers } = reopened;
    const session = new Session(id, deps, transcript, paired.messages, lastTurn, markers);
    const restored = restoreClearedOutputs(markers, paired.messages, (callId, text) =>
      session.#context.saveOutput(callId, text),
    );
    if (restored.marker) {
      markers.push(restored.marker);
      session.#context.record(restored.marker);
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
    session.#log.countSpent(loaded.entries);
    return { session, warnings: resumeWarnings(reopened, restored.warnings) };
  }

  /**
   * A new session going on from the end of turn `atTurn` of session `id` (`session-open.ts`,
   * `forkTranscript`): this is how a compaction is undone. The old session is left as it was.
   */
  static async fork(
    deps: SessionDeps,
    id: string,
    atTurn: number,
  ): Promise<{ session: Session; warnings: string[] }> {
    const forked = await forkTranscript(deps.sessionsDir, deps.root, id, atTurn);
    const opened = Session.resume(deps, forked);
    return {
      session: opened.session,
      warnings: [`forked from ${id} at turn ${atTurn}`, ...opened.warnings],
    };
  }

  /** What its turns have used, those read back from the transcript included. */
  get usage(): Usage {
    return this.#log.usage;
  }

  get costUsd(): number {
    return this.#log.costUsd;
  }

  /** Turns that ended in this session, in this run or earlier ones. */
  get turns(): number {
    return this.#log.ended;
  }

  /** Closes the transcript once what was appended is written. */
  close(): Promise<void> {
    return this.#log.transcript.close();
  }

  /** Resolves once what was recorded so far is on disk (a disk fault is kept, not thrown). */
  saved(): Promise<void> {
    return this.#log.flush();
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
    const turn = new TurnLoop(this.#turnHost(), plan, params, io, signal);
    this.#lastModel = plan.modelName;
    return turn.run([...notices, ...plan.notices]);
  }

  /** What the turn loop is given of this session. */
  #turnHost(): TurnHost {
    return {
      log: this.#log,
      depth: this.depth,
      stepLimit: this.stepLimit,
      deps: this.deps,
      hooks: this.hooks,
      skills: this.skills,
      context: this.#context,
      prompt: this.#prompt,
      toolTable: (chain, params, model) => this.#toolTable(chain, params, model),
      ended: () => {
        this.#running = false;
      },
    };
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
      const model = await this.#context.turnModel(
        this.#lastModel ?? this.deps.config().config.model,
      );
      const table = await buildToolTable(this.deps.tools, this.deps.mcp, this.disabled, {
        model,
        config: this.deps.config(),
      });
      const system = await this.#prompt.system(
        table.size > 0,
        { sessionId: this.id, text: '', interactive: true },
        io,
        signal,
      );
      const tools = withToolSearch(table, this.deps.config(), model.contextWindow, new Set());
      await this.hooks.preCompact('manual', io, signal);
      const fitted = await this.#context.fit(
        model,
        system,
        tools.plan.offered,
        io,
        signal,
        true,
        focus,
      );
      await this.#log.flush();
      return fitted.notes.length
        ? fitted.notes
        : ['nothing to compact yet: the conversation is too short'];
    } finally {
      this.#running = false;
    }
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
    const model = await this.#context.turnModel(name);
    const agent = findAgent(usableExtensions(loaded).extensions, this.agent);
    const asked = { sessionId: this.id, text: '', interactive: false, ...params };
    const chain = [...this.inherited, profileLimit(agent)];
    const table = await this.#toolTable(chain, asked, model);
    const skills = table.has(SKILL_TOOL)
      ? this.skills.section(chain, model.contextWindow)
      : undefined;
    return this.#context.report({
      loaded,
      name,
      model,
      agent: agent.name,
      table,
      prompt: {
        ...this.#prompt.options(table.size > 0, asked, signal, agent),
        ...(skills ? { skills } : {}),
      },
    });
  }

  /** The tools of a step as the turn's agent sees them (`session-tools.ts`). */
  #toolTable(
    chain: ProfileLimit[],
    params: PromptParams,
    model: TableFor['model'],
  ): Promise<ToolTable> {
    const view = {
      deps: this.deps,
      disabled: this.disabled,
      depth: this.depth,
      skills: this.skills,
    };
    return sessionToolTable(view, chain, model, (job) =>
      this.#runChild(job, params, chain, model.name),
    );
  }

  /** Runs a subagent's job in a child session (`subagent-run.ts`). */
  #runChild(
    job: SubagentRun,
    params: PromptParams,
    chain: ProfileLimit[],
    model: string,
  ): Promise<ToolResult> {
    const parent: SubagentParent = {
      log: this.#log,
      depth: this.depth,
      disabled: this.disabled,
      slots: this.deps.subagents,
      openChild: (options, parentModel) => {
        const child = Session.create(this.deps, options);
        child.#parentModel = parentModel;
        return child;
      },
    };
    return runSubagent(parent, job, params, chain, model);
  }
}
