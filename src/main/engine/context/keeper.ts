import type { ChatMessage, ToolSpec } from '../../../workers/protocol/api.ts';
import {
  applyCompaction,
  indexOfUser,
  outputsToClear,
  summaryRequest,
  summarySection,
  summarySplit,
  tokensOf,
  usersBefore,
  type CompactionMarker,
} from './compaction.ts';
import { resultText } from '../../../workers/protocol/tool-result.ts';
import { Calibration, estimateText, measure, type ContextUse } from './tokens.ts';

/** What a request is made of, before it is fitted to the window. */
export interface RequestInput {
  /** The full history of the session. */
  history: readonly ChatMessage[];
  system: string;
  instructionChars: number;
  tools: readonly ToolSpec[];
}

/** A request fitted to the window: what to send, what it weighs, and what was done to fit it. */
export interface Fitted {
  system: string;
  messages: ChatMessage[];
  use: ContextUse;
  /** The compactions made to fit it (to be recorded in the transcript). */
  compactions: CompactionMarker[];
  /** What the user is told about them. */
  notes: string[];
}

export interface FitOptions {
  /** The model's context window, in tokens. */
  window: number;
  /** Tokens kept free for the answer. */
  reserve: number;
  /** Share of the window at which compaction starts; `false`: only when it must. */
  threshold: number | false;
  /** Compact now, whatever the size (`/compact`), with this focus for the summary. */
  force?: { focus?: string };
  signal: AbortSignal;
}

/** How a keeper saves a cleared output and asks a model for a summary. */
export interface KeeperDeps {
  /** Saves a tool output that is being cleared; returns the file the stub names. */
  saveOutput(callId: string, text: string): string;
  /** Asks the compaction model; returns its text. */
  summarize(messages: ChatMessage[], signal: AbortSignal): Promise<string>;
}

/** The newest tokens of conversation never cleared: at most 40k, at most 30 % of the window. */
const protectedTail = (window: number) => Math.min(40_000, Math.floor(window * 0.3));

/** Characters of older conversation one summary request may carry (the rest goes by chunks). */
const chunkChars = (window: number) => Math.floor(window * 0.5) * 4;

/**
 * A session's context: the compactions made so far (replayed onto its history for every request)
 * and how far the local token estimate is off. `fit` makes a request fit its model's window:
 * clearing old tool outputs first, then summarizing the older turns.
 */
export class ContextKeeper {
  readonly calibration = new Calibration();
  readonly markers: CompactionMarker[];

  constructor(
    private readonly deps: KeeperDeps,
    markers: CompactionMarker[] = [],
  ) {
    this.markers = markers;
  }

  /** The request as it stands after the compactions so far. */
  view(input: RequestInput): { system: string; messages: ChatMessage[]; use: ContextUse } {
    const { messages, summary } = applyCompaction(input.history, this.markers);
    const system = summary ? `${input.system}\n\n${summarySection(summary)}` : input.system;
    const use = measure(
      { system, instructionChars: input.instructionChars, messages, tools: input.tools },
      this.calibration.scale,
    );
    return { system, messages, use };
  }

  /** Fits `input` to the window; compacts (recording markers) when it must or is asked to. */
  async fit(input: RequestInput, options: FitOptions): Promise<Fitted> {
    const limit = options.window - options.reserve;
    const start =
      options.threshold === false ? limit : Math.floor(options.window * options.threshold);
    const compactions: CompactionMarker[] = [];
    const notes: string[] = [];
    let view = this.view(input);
    if (view.use.total > start || options.force) {
      const cleared = this.#clear(
        input.history,
        view.use.total - Math.floor(start * 0.7),
        options.window,
      );
      if (cleared) {
        compactions.push(cleared.marker);
        notes.push(cleared.note);
        view = this.view(input);
      }
    }
    if (view.use.total > start || options.force) {
      const summarized = await this.#summarize(input.history, options);
      if (summarized) {
        compactions.push(summarized.marker);
        notes.push(summarized.note);
        view = this.view(input);
      }
    }
    if (view.use.total > limit)
      throw new Error(
        `the conversation does not fit the model's context window even compacted (about ${view.use.total} tokens of ${options.window}, ${options.reserve} kept for the answer): ` +
          'start a new session (/clear), or use a model with a larger window (models.<name>.contextWindow)',
      );
    return { ...view, compactions, notes };
  }

  /** Clears old tool outputs worth `need` tokens (all old ones when `need` is 0 or less). */
  #clear(history: readonly ChatMessage[], need: number, window: number) {
    const done = new Set(this.markers.flatMap((m) => m.cleared.map((c) => c.id)));
    const chosen = outputsToClear(history, done, protectedTail(window), Math.max(0, need));
    if (chosen.length === 0) return undefined;
    const marker: CompactionMarker = {
      cleared: chosen.map((m) => ({
        id: m.toolCallId,
        file: this.deps.saveOutput(m.toolCallId, resultText(m.result)),
      })),
    };
    this.markers.push(marker);
    const saved = chosen.reduce((sum, m) => sum + estimateText(resultText(m.result)), 0);
    return {
      marker,
      note: `context compacted: cleared ${chosen.length} old tool output(s), about ${saved} tokens (saved to files the model can read)`,
    };
  }

  /** Summarizes what precedes the newest turns, in chunks when it is long. */
  async #summarize(history: readonly ChatMessage[], options: FitOptions) {
    const last = [...this.markers].reverse().find((m) => m.summary !== undefined);
    const from = indexOfUser(history, last?.summarizedTurns ?? 0);
    const split = summarySplit(history, protectedTail(options.window), from);
    if (split === undefined || split <= from) return undefined;
    // What comes after the last summary and before the kept turns, cleared outputs as stubs.
    const part = applyCompaction(history.slice(0, split), this.markers).messages;
    let summary = last?.summary;
    for (const chunk of chunks(part, chunkChars(options.window)))
      summary = (
        await this.deps.summarize(
          summaryRequest(chunk, summary, options.force?.focus),
          options.signal,
        )
      ).trim();
    if (!summary) return undefined;
    const replaced = tokensOf(part) + (last?.summary ? estimateText(last.summary) : 0);
    if (estimateText(summary) >= replaced) return undefined;
    const marker: CompactionMarker = {
      cleared: [],
      summarizedTurns: usersBefore(history, split),
      summary,
    };
    this.markers.push(marker);
    return {
      marker,
      note: `context compacted: ${split - from} earlier message(s) summarized (about ${replaced} → ${estimateText(summary)} tokens)`,
    };
  }
}

/** `messages` in runs of at most `chars` characters (at least one message each). */
const chunks = (messages: readonly ChatMessage[], chars: number): ChatMessage[][] => {
  const out: ChatMessage[][] = [];
  let current: ChatMessage[] = [];
  let size = 0;
  for (const message of messages) {
    const weight = tokensOf([message]) * 4;
    if (current.length && size + weight > chars) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += weight;
  }
  if (current.length) out.push(current);
  return out;
};
