import type { LoadedConfig } from '../extensions/workspace-config.ts';
import type { CompactionMarker } from './context/compaction.ts';
import { ContextKeeper, type Fitted } from './context/keeper.ts';
import { saveClearedOutput } from './context/markers.ts';
import type { SummaryModel } from './context/summary.ts';
import { answerReserve, summaryModel, type TurnModel } from './context/turn-fit.ts';
import { buildSystemPrompt, type PromptOptions } from './context/prompt.ts';
import { contextReport, type ContextReport } from './context/report.ts';
import { withToolSearch } from './context/request.ts';
import { readTranscript } from './transcript.ts';
import type { SessionDeps } from './session-deps.ts';
import type { SessionLog } from './session-log.ts';
import type { TurnPrompt } from './session-prompt.ts';
import type { ToolTable, TurnIO } from './tool-calls.ts';

type ContextDeps = Pick<
  SessionDeps,
  'config' | 'windows' | 'api' | 'resolveModel' | 'outputsDir' | 'sessionsDir'
>;

/** What a context report is of: the model, the agent, the tools and the prompt of a next turn. */
interface ReportOf {
  /** The config the report was begun with. */
  loaded: LoadedConfig;
  /** The model's name as asked (the report names it so). */
  name: string;
  model: TurnModel;
  agent: string;
  table: ToolTable;
  prompt: PromptOptions;
}

/**
 * A session's context: its model's window (the ladder of `context/window.ts`), and what a request
 * carries of the history — compactions so far, cleared outputs, the token calibration.
 */
export class SessionContext {
  /** Compactions so far and the token calibration: what a request carries of the history. */
  readonly keeper: ContextKeeper;

  constructor(
    private readonly deps: ContextDeps,
    private readonly log: SessionLog,
    markers: CompactionMarker[] = [],
  ) {
    this.keeper = new ContextKeeper(
      { saveOutput: (callId, text) => this.saveOutput(callId, text) },
      markers,
    );
  }

  /** Saves a cleared tool output where the model can read it again. */
  saveOutput(callId: string, text: string): string {
    return saveClearedOutput(this.deps.outputsDir, this.log.id, callId, text);
  }

  /** The model of a turn, with its context window (from the config, the provider, or a default). */
  async turnModel(name: string): Promise<TurnModel> {
    const model = this.deps.resolveModel(name);
    const configured = this.deps.config().config.models[name]?.contextWindow;
    const { tokens } = await this.deps.windows.resolve(model, configured);
    return { ...model, contextWindow: tokens };
  }

  /** The model that writes summaries: `agent.compaction.model`, else the turn's own. */
  async #summarizer(model: TurnModel): Promise<SummaryModel> {
    const name = this.deps.config().config.agent.compaction.model;
    const chosen = name && name !== model.name ? await this.turnModel(name) : model;
    return summaryModel(chosen, this.deps.windows.calibrations.of(chosen), this.deps.api);
  }

  /** Fits the conversation to the window, records what compaction did, and says what it weighs. */
  async fit(
    model: TurnModel,
    system: TurnPrompt,
    tools: Parameters<ContextKeeper['view']>[0]['tools'],
    io: TurnIO,
    signal: AbortSignal,
    force: boolean,
    focus?: string,
  ): Promise<Fitted> {
    const { threshold } = this.deps.config().config.agent.compaction;
    const fitted = await this.keeper.fit(
      {
        history: this.log.messages,
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
    for (const marker of fitted.compactions) this.record(marker);
    for (const text of fitted.notes) io.emit({ type: 'notice', level: 'info', text });
    io.emit({ type: 'context', use: fitted.use, window: model.contextWindow });
    return fitted;
  }

  /** Writes a compaction to the transcript. */
  record(marker: CompactionMarker): void {
    this.log.transcript.append({
      type: 'compaction',
      time: new Date().toISOString(),
      turn: this.log.turn,
      marker,
    });
  }

  /**
   * What the next request of the session holds, part by part, without sending it: its prompt,
   * tools (as tool search would plan them) and history as compacted so far.
   */
  async report({
    loaded,
    name,
    model,
    agent,
    table,
    prompt: options,
  }: ReportOf): Promise<ContextReport> {
    const prompt = await buildSystemPrompt(options);
    const tools = withToolSearch(table, loaded, model.contextWindow, new Set());
    const calibration = this.deps.windows.calibrations.of(model);
    await this.log.flush();
    return contextReport({
      sessionId: this.log.id,
      agent,
      model: name,
      window: await this.deps.windows.resolve(model, loaded.config.models[name]?.contextWindow),
      reserve: answerReserve(model),
      threshold: loaded.config.agent.compaction.threshold,
      calibration,
      prompt: prompt.parts,
      view: this.keeper.view(
        {
          history: this.log.messages,
          system: prompt.text,
          instructionChars: prompt.instructionChars,
          tools: tools.plan.offered,
        },
        calibration.scale,
      ),
      plan: tools.plan,
      history: this.log.messages,
      markers: this.keeper.markers,
      entries: readTranscript(this.deps.sessionsDir, this.log.id).entries,
    });
  }
}
