import type {
  ChatMessage,
  LlmEvent,
  ModelSpec,
  StreamRequest,
  ToolCall,
  Usage,
} from '../../workers/protocol/api.ts';
import type { LoadedConfig } from '../config/load.ts';
import { NifflerError, toWire } from '../errors.ts';
import { fail } from '../../workers/protocol/tool-result.ts';
import type { PromptParams, TurnOutcome, TurnSummary } from '../protocol.ts';
import { VERSION } from '../version.ts';
import type { ApprovalStore } from './approvals.ts';
import { buildSystemPrompt } from './prompt.ts';
import {
  buildToolTable,
  runToolCalls,
  type BuiltinTools,
  type McpTools,
  type ToolTable,
  type TurnIO,
} from './tool-calls.ts';
import { newSessionId, readTranscript, Transcript } from './transcript.ts';

export type { BuiltinTools, McpTools, TurnIO } from './tool-calls.ts';

/** The API worker as the loop sees it. */
export interface LlmStreamer {
  stream(request: StreamRequest, signal: AbortSignal): AsyncIterable<LlmEvent>;
}

export interface SessionDeps {
  root: string;
  sessionsDir: string;
  api: LlmStreamer;
  tools: BuiltinTools;
  mcp: McpTools;
  approvals: ApprovalStore;
  config: () => LoadedConfig;
  resolveModel: (name: string) => ModelSpec;
  /** MCP servers' instructions for the system prompt (trusted, ready servers). */
  instructions?: () => { server: string; text: string }[];
}

const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0 });
const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  ...(a.cacheReadTokens !== undefined || b.cacheReadTokens !== undefined
    ? { cacheReadTokens: (a.cacheReadTokens ?? 0) + (b.cacheReadTokens ?? 0) }
    : {}),
  ...(a.reasoningTokens !== undefined || b.reasoningTokens !== undefined
    ? { reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0) }
    : {}),
});

/**
 * One conversation: its history, transcript and per-session tool switches. `prompt` runs a turn:
 * stream → tool calls → approvals → run (read-only calls in parallel, others in order) → results →
 * repeat until the model answers or `agent.maxSteps`. Every message is on disk before the next step.
 */
export class Session {
  readonly messages: ChatMessage[];
  readonly disabled = new Set<string>();
  /** What its turns have used, those read back from the transcript included. */
  usage: Usage = zeroUsage();
  costUsd = 0;
  /** The number of the last turn begun (transcript entries carry it). */
  #turn: number;
  #ended = 0;
  #running = false;
  /** The prompt-file notices last shown, so each is said once. */
  #promptNotes = '';

  private constructor(
    readonly id: string,
    private readonly deps: SessionDeps,
    private readonly transcript: Transcript,
    messages: ChatMessage[],
    turn: number,
  ) {
    this.messages = messages;
    this.#turn = turn;
  }

  static create(deps: SessionDeps): Session {
    const id = newSessionId();
    const transcript = Transcript.open(deps.sessionsDir, id);
    transcript.append({
      type: 'session',
      id,
      root: deps.root,
      createdAt: new Date().toISOString(),
      version: VERSION,
    });
    return new Session(id, deps, transcript, [], 0);
  }

  /** Reopens a session from its transcript (torn lines skipped, reported in `warnings`). */
  static resume(deps: SessionDeps, id: string): { session: Session; warnings: string[] } {
    const loaded = readTranscript(deps.sessionsDir, id);
    // Numbered on from the highest turn written: a turn that failed before its start was written
    // still has its end there.
    const lastTurn = Math.max(0, ...loaded.entries.map((e) => ('turn' in e ? e.turn : 0)));
    const session = new Session(
      id,
      deps,
      Transcript.open(deps.sessionsDir, id),
      loaded.messages,
      lastTurn,
    );
    const ended = new Set<number>();
    for (const entry of loaded.entries) if (entry.type === 'turn-end') ended.add(entry.turn);
    for (const entry of loaded.entries) {
      if (entry.type === 'turn-end') {
        session.usage = addUsage(session.usage, entry.usage);
        session.costUsd += entry.costUsd ?? 0;
        session.#ended++;
      } else if (entry.type === 'message' && entry.usage && !ended.has(entry.turn)) {
        // A turn cut short (the daemon was killed): what its finished steps used.
        session.usage = addUsage(session.usage, entry.usage);
      }
    }
    return { session, warnings: loaded.warnings };
  }

  /** Turns that ended in this session, in this run or earlier ones. */
  get turns(): number {
    return this.#ended;
  }

  /** Closes the transcript once what was appended is written. */
  close(): Promise<void> {
    return this.transcript.close();
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

  /** Runs one turn; never throws for model or tool failures (they end up in the summary). */
  async prompt(params: PromptParams, io: TurnIO, signal: AbortSignal): Promise<TurnSummary> {
    if (this.#running)
      throw new NifflerError(
        'usage',
        `session ${this.id} is already running a turn; wait for it or cancel it`,
      );
    // Read before taking the session: a config that does not load fails this prompt only.
    const config = this.deps.config().config;
    this.#running = true;
    const modelName = params.model ?? config.model;
    const turn = ++this.#turn;
    let usage = zeroUsage();
    let steps = 0;
    const denied: string[] = [];
    let lastText = '';
    const end = async (outcome: TurnOutcome, failure?: string): Promise<TurnSummary> => {
      let error = failure;
      const prices = config.models[modelName]?.prices;
      const costUsd = prices
        ? (usage.inputTokens * prices.input + usage.outputTokens * prices.output) / 1e6
        : undefined;
      this.usage = addUsage(this.usage, usage);
      if (costUsd !== undefined) this.costUsd += costUsd;
      this.#ended++;
      const summary: TurnSummary = {
        outcome,
        text: lastText,
        usage,
        steps,
        denied,
        ...(costUsd !== undefined ? { costUsd } : {}),
        ...(error ? { error } : {}),
      };
      this.transcript.append({
        type: 'turn-end',
        time: new Date().toISOString(),
        turn,
        outcome,
        usage,
        steps,
        ...(costUsd !== undefined ? { costUsd } : {}),
        ...(error ? { error } : {}),
      });
      try {
        await this.transcript.flushed();
      } catch (writeError) {
        // The answer still reaches the user; the summary says the transcript is incomplete.
        error = (writeError as Error).message;
        summary.outcome = 'error';
        summary.error = error;
      }
      io.emit({ type: 'turn-end', summary });
      this.#running = false;
      return summary;
    };
    try {
      const model = this.deps.resolveModel(modelName);
      this.transcript.append({
        type: 'turn-start',
        time: new Date().toISOString(),
        turn,
        model: modelName,
      });
      io.emit({ type: 'turn-start', turn, model: modelName });
      this.#record({ role: 'user', content: params.text });
      const table = await buildToolTable(this.deps.tools, this.deps.mcp, this.disabled);
      const system = this.#systemPrompt(table.size > 0, io);
      for (steps = 1; steps <= config.agent.maxSteps; steps++) {
        if (signal.aborted) return await end('cancelled');
        // Everything so far is on disk before the model is asked again.
        await this.transcript.flushed();
        const step = await this.#stream(model, system, table, io, signal);
        usage = addUsage(usage, step.usage);
        io.emit({ type: 'usage', usage });
        const calls = [...step.calls];
        if (step.text || step.reasoning || calls.length)
          this.#record(
            {
              role: 'assistant',
              content: step.text,
              ...(step.reasoning ? { reasoning: step.reasoning } : {}),
              ...(calls.length ? { toolCalls: calls } : {}),
            },
            { model: modelName, usage: step.usage },
          );
        if (step.text) lastText = step.text;
        if (step.cancelled) {
          this.#fillMissing(calls, 'the turn was cancelled before this call ran');
          return await end('cancelled');
        }
        if (calls.length === 0) return await end('answered');
        const results = await runToolCalls(
          calls,
          step.invalid,
          table,
          {
            sessionId: this.id,
            tools: this.deps.tools,
            mcp: this.deps.mcp,
            approvals: this.deps.approvals,
            config: this.deps.config(),
            params,
            io,
            signal,
          },
          denied,
        );
        for (const { call, result } of results)
          this.#record({ role: 'tool', toolCallId: call.id, name: call.name, result });
        if (signal.aborted) return await end('cancelled');
      }
      steps = config.agent.maxSteps;
      io.emit({
        type: 'notice',
        level: 'warn',
        text: `stopped after ${steps} steps (agent.maxSteps); send "continue" to let the model go on`,
      });
      return await end('max-steps');
    } catch (error) {
      if (signal.aborted) return await end('cancelled');
      // The error travels in the turn's summary, once (a notice as well showed it twice).
      return await end('error', toWire(error).message);
    }
  }

  /**
   * The system prompt, with the repository's prompt files only while it is trusted; says once
   * per session what was left out and why.
   */
  #systemPrompt(hasTools: boolean, io: TurnIO): string {
    const trusted = this.deps.config().trust.level === 'trusted';
    const instructions = this.deps.instructions?.() ?? [];
    const prompt = buildSystemPrompt(this.deps.root, { hasTools, trusted, instructions });
    const notes = [
      ...(prompt.untrusted.length
        ? [
            `${prompt.untrusted.join(', ')} not given to the model: this repository is not trusted (review with niffler trust --diff, then niffler trust)`,
          ]
        : []),
      ...prompt.refused.map(({ file, why }) => `${file} not given to the model: it ${why}`),
    ];
    const key = notes.join('\n');
    if (key && key !== this.#promptNotes)
      for (const text of notes) io.emit({ type: 'notice', level: 'warn', text });
    this.#promptNotes = key;
    return prompt.text;
  }

  async #stream(
    model: ModelSpec,
    system: string,
    table: ToolTable,
    io: TurnIO,
    signal: AbortSignal,
  ) {
    let text = '';
    let reasoning = '';
    let stepUsage = zeroUsage();
    const calls: ToolCall[] = [];
    const invalid = new Map<string, string>();
    const request: StreamRequest = {
      model,
      messages: [{ role: 'system', content: system }, ...this.messages],
      tools: [...table.values()].map((t) => t.spec),
    };
    try {
      for await (const event of this.deps.api.stream(request, signal)) {
        switch (event.type) {
          case 'text':
            text += event.text;
            io.emit({ type: 'text', text: event.text });
            break;
          case 'reasoning':
            reasoning += event.text;
            io.emit({ type: 'reasoning', text: event.text });
            break;
          case 'tool-call':
            calls.push(event.call);
            io.emit({
              type: 'tool-call',
              id: event.call.id,
              name: event.call.name,
              args: event.call.args,
              ...(table.get(event.call.name)?.server
                ? { server: table.get(event.call.name)!.server! }
                : {}),
            });
            break;
          case 'tool-call-invalid':
            calls.push({ id: event.id, name: event.name, args: {} });
            invalid.set(
              event.id,
              `your call to ${event.name} could not be read: ${event.message}. Write the call again with valid JSON arguments.`,
            );
            io.emit({ type: 'tool-call', id: event.id, name: event.name, args: {} });
            break;
          case 'usage':
            stepUsage = addUsage(stepUsage, event.usage);
            break;
          case 'retry':
            io.emit({
              type: 'retry',
              attempt: event.attempt,
              delayMs: event.delayMs,
              reason: event.reason,
            });
            break;
          case 'tool-protocol':
            io.emit({
              type: 'notice',
              level: 'info',
              text: `${model.name}: ${event.reason}; using the text tool protocol`,
            });
            break;
          case 'done':
          case 'error':
            break;
        }
      }
    } catch (error) {
      if (!signal.aborted) throw error;
      return { text, reasoning, calls, invalid, usage: stepUsage, cancelled: true };
    }
    return { text, reasoning, calls, invalid, usage: stepUsage, cancelled: signal.aborted };
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
