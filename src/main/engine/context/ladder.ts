import type { ChatMessage, ToolSpec } from '../../../workers/protocol/api.ts';
import { resultText } from '../../../workers/protocol/tool-result.ts';
import {
  clearable,
  clearedFiles,
  clearedStub,
  keptIndices,
  largestUntil,
  lastSummary,
  stepStarts,
  stubbed,
  summarySplit,
  tailStart,
  tokensOf,
  userStarts,
  usersBefore,
  type CompactionMarker,
} from './compaction.ts';
import { modelSummary, outline, summaryBound, type SummaryModel } from './summary.ts';
import {
  ESTIMATE_MARGIN,
  estimateText,
  messageTokens,
  type Calibration,
  type ContextUse,
} from './tokens.ts';

// The order in which a request is made to fit its model's window. Each step runs only while the
// request is still too large, and each records a marker (in the transcript, undone by resuming at
// an earlier turn). Past the threshold: (1) clear old tool outputs; (2) summarize the older turns.
// Past what the window holds: (3) shrink the protected tail, turn by turn down to the newest —
// clearing outputs where that is enough, else summarizing; (4) clear the newest turn's earlier
// tool outputs; (5) summarize again with the newest turn's earlier steps, the summary bounded by
// the room left; (6) clear the outputs of the newest turn's last step; (7) summarize its steps
// too, keeping only the user's message. What is kept always begins at a user message and never
// parts a tool call from its result. Only if the newest user message cannot fit even alone with
// the system prompt, tool definitions and the answer's reserve does the turn fail, saying by how
// much and what to do.

/** What a request is made of, before it is fitted to the window. */
export interface RequestInput {
  /** The full history of the session. */
  history: readonly ChatMessage[];
  system: string;
  instructionChars: number;
  tools: readonly ToolSpec[];
}

/** A request as the compactions so far leave it, and what it weighs. */
export interface RequestView {
  system: string;
  messages: ChatMessage[];
  /** Scaled by the model's calibration: the tokens the provider is expected to count. */
  use: ContextUse;
  /** The total before scaling (what calibration learns from). */
  estimated: number;
}

/** A request fitted to the window: what to send, what it weighs, and what was done to fit it. */
export interface Fitted extends RequestView {
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
  /** How far the estimate is from what the model's provider counts. */
  calibration: Calibration;
  /** The model's name, for what the user is told. */
  model?: string;
  /** The model that writes summaries: its window, its scale, and how to ask it. */
  summarizer: SummaryModel;
  /** Compact now, whatever the size (`/compact`), with this focus for the summary. */
  force?: { focus?: string };
  signal: AbortSignal;
}

/** How a keeper saves a cleared output. */
export interface KeeperDeps {
  /** Saves a tool output that is being cleared; returns the file the stub names. */
  saveOutput(callId: string, text: string): string;
}

/** What the ladder works on: a keeper's markers, how it saves outputs, and its view. */
interface Keeper {
  readonly markers: CompactionMarker[];
  readonly deps: KeeperDeps;
  view(input: RequestInput, scale: number): RequestView;
}

/** The newest tokens of conversation a threshold compaction keeps whole: at most 40k. */
const MAX_TAIL = 40_000;
/** Tokens a stub of a cleared output weighs, about. */
const STUB_TOKENS = estimateText(clearedStub('/x'.repeat(40))) + 8;
/** A summary is not made smaller than this while later steps can still shrink the request. */
const MIN_SUMMARY = 200;

/** What a request may weigh (scaled estimate): `limit` it must stay under; `start` compaction. */
export const budgetOf = (options: Pick<FitOptions, 'window' | 'reserve' | 'threshold'>) => {
  const limit = Math.floor((options.window - options.reserve) / (1 + ESTIMATE_MARGIN));
  const start =
    options.threshold === false
      ? limit
      : Math.min(limit, Math.floor(options.window * options.threshold));
  return { limit, start };
};

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** One fitting of a request: the steps above, over the keeper's markers. */
export class Ladder {
  readonly #history: readonly ChatMessage[];
  readonly #scale: number;
  readonly #limit: number;
  readonly #start: number;
  #view: RequestView;
  readonly #compactions: CompactionMarker[] = [];
  readonly #notes: string[] = [];

  constructor(
    private readonly keeper: Keeper,
    private readonly input: RequestInput,
    private readonly options: FitOptions,
  ) {
    this.#history = input.history;
    this.#scale = options.calibration.scale;
    ({ limit: this.#limit, start: this.#start } = budgetOf(options));
    this.#view = keeper.view(input, this.#scale);
  }

  async run(): Promise<Fitted> {
    // When the newest user message cannot fit even alone, no step can help: say so at once,
    // compacting nothing.
    if (this.#aloneTooLarge()) throw new Error(this.#tooLarge());
    const force = this.options.force !== undefined;
    if (this.#over(this.#start) || force) this.#clearOld(force);
    if (this.#over(this.#start) || force) await this.#summarizeOld();
    if (this.#over(this.#limit)) this.#clearShrinking();
    if (this.#over(this.#limit)) await this.#summarizeShrinking();
    if (this.#over(this.#limit)) this.#clearNewest(false);
    if (this.#over(this.#limit)) await this.#summarizeSteps(false);
    if (this.#over(this.#limit)) this.#clearNewest(true);
    if (this.#over(this.#limit)) await this.#summarizeSteps(true);
    if (this.#over(this.#limit)) throw new Error(this.#tooLarge());
    return { ...this.#view, compactions: this.#compactions, notes: this.#notes };
  }

  #over(tokens: number): boolean {
    return this.#view.use.total > tokens;
  }

  /** System prompt (without the summary), instructions and tools: what no step shrinks. */
  #fixed(): number {
    const { use } = this.#view;
    return use.system + use.instructions + use.tools;
  }

  /** The newest tokens a threshold compaction keeps whole (unscaled). */
  #tail(): number {
    const room = this.#limit - this.#fixed() - summaryBound(this.options.window);
    const tail = Math.min(MAX_TAIL, this.options.window * 0.3, room * 0.5);
    return Math.max(0, Math.floor(tail / this.#scale));
  }

  /** The indices the request carries now, and each one's weight (unscaled; 0 if not carried). */
  #kept() {
    const kept = keptIndices(this.#history, lastSummary(this.keeper.markers));
    const cleared = clearedFiles(this.keeper.markers);
    const carried = new Set(kept);
    const weight = (i: number) =>
      carried.has(i) ? messageTokens(stubbed(this.#history[i]!, cleared)) : 0;
    return { kept, cleared, weight };
  }

  #record(marker: CompactionMarker, note: string): void {
    this.keeper.markers.push(marker);
    this.#compactions.push(marker);
    this.#notes.push(`context compacted: ${note}`);
    this.#view = this.keeper.view(this.input, this.#scale);
  }

  /** Clears `chosen` (saving each to a file the model can read); false when there is none. */
  #clear(chosen: Extract<ChatMessage, { role: 'tool' }>[], what: string): boolean {
    if (chosen.length === 0) return false;
    const saved = chosen.reduce((sum, m) => sum + messageTokens(m) - STUB_TOKENS, 0);
    const marker: CompactionMarker = {
      cleared: chosen.map((m) => ({
        id: m.toolCallId,
        file: this.keeper.deps.saveOutput(m.toolCallId, resultText(m.result)),
      })),
    };
    this.#record(
      marker,
      `cleared ${chosen.length} ${what}, about ${fmt(saved * this.#scale)} tokens (saved to files the model can read)`,
    );
    return true;
  }

  /** (1) Outputs older than the protected tail, largest first, until well under the threshold. */
  #clearOld(all: boolean): void {
    const { kept, cleared, weight } = this.#kept();
    const { user } = this.#newest();
    const old = kept.slice(0, tailStart(kept, this.#tail(), weight)).filter((i) => i < user);
    const need = all ? 0 : (this.#view.use.total - Math.floor(this.#start * 0.7)) / this.#scale;
    this.#clear(largestUntil(clearable(this.#history, old, cleared), need), 'old tool output(s)');
  }

  /** (2) The turns before the protected tail. */
  async #summarizeOld(): Promise<void> {
    const { kept, weight } = this.#kept();
    const from = kept[0] ?? 0;
    const split = summarySplit(this.#history, this.#tail(), from, weight);
    if (split !== undefined && split > from) await this.#summarize(split, 0, false);
  }

  /** (3a) Outputs before the oldest split where clearing them is enough, if there is one. */
  #clearShrinking(): void {
    const { kept, cleared } = this.#kept();
    const starts = new Set(userStarts(this.#history, kept[0] ?? 0));
    const excess = (this.#view.use.total - this.#limit) / this.#scale;
    const before: Extract<ChatMessage, { role: 'tool' }>[] = [];
    let saved = 0;
    for (const i of kept) {
      if (starts.has(i) && saved >= excess) {
        this.#clear(largestUntil(before, excess), 'older tool output(s)');
        return;
      }
      const [output] = clearable(this.#history, [i], cleared);
      if (output) {
        before.push(output);
        saved += messageTokens(output) - STUB_TOKENS;
      }
    }
  }

  /** (3b) The oldest split after which the kept turns and a summary fit; else the newest turn. */
  async #summarizeShrinking(): Promise<void> {
    const { kept, weight } = this.#kept();
    const starts = userStarts(this.#history, kept[0] ?? 0);
    if (starts.length === 0) return;
    const room = (this.#limit - this.#fixed()) / this.#scale;
    const bound = summaryBound(this.options.window) / this.#scale;
    let after = 0;
    const suffix = new Map<number, number>();
    for (let i = this.#history.length - 1; i >= starts[0]!; i--) {
      after += weight(i);
      suffix.set(i, after);
    }
    const split = starts.find((s) => suffix.get(s)! + bound <= room) ?? starts.at(-1)!;
    await this.#summarize(split, 0, false);
  }

  /** The newest user message's index, and where the last step of its turn begins. */
  #newest() {
    let user = this.#history.length - 1;
    while (user > 0 && this.#history[user]!.role !== 'user') user--;
    return { user, last: stepStarts(this.#history, user).at(-1) };
  }

  /** (4, 6) The newest turn's outputs: of its earlier steps, or of all of them. */
  #clearNewest(lastToo: boolean): void {
    const { user, last } = this.#newest();
    const { kept, cleared } = this.#kept();
    const range = kept.filter((i) => i > user && (lastToo || (last !== undefined && i < last)));
    const need = (this.#view.use.total - this.#limit) / this.#scale + STUB_TOKENS;
    const what = lastToo
      ? 'tool output(s) of this turn'
      : "tool output(s) of this turn's earlier steps";
    this.#clear(largestUntil(clearable(this.#history, range, cleared), need), what);
  }

  /** (5, 7) The newest turn's earlier steps (or all of them) summarized with what came before. */
  async #summarizeSteps(all: boolean): Promise<void> {
    const { user, last } = this.#newest();
    const upto = all ? this.#history.length : last;
    if (upto === undefined || upto <= user + 1) return;
    await this.#summarize(user, upto - user - 1, true);
  }

  /**
   * Summarizes what the request carries before `cut` (a user message) and the `steps` messages
   * after it, into a summary bounded by the room the request has left (`final`: even below
   * `MIN_SUMMARY`, down to nothing). A model writes it; if it fails, niffler's outline stands in.
   */
  async #summarize(cut: number, steps: number, final: boolean): Promise<void> {
    const marker: CompactionMarker = {
      cleared: [],
      summarizedTurns: usersBefore(this.#history, cut),
      ...(steps ? { summarizedSteps: steps } : {}),
    };
    const { kept, cleared, weight } = this.#kept();
    const after = new Set(keptIndices(this.#history, marker));
    const dropped = kept
      .filter((i) => !after.has(i))
      .map((i) => stubbed(this.#history[i]!, cleared));
    if (dropped.length === 0) return;
    const previous = lastSummary(this.keeper.markers)?.summary || undefined;
    const replaced = tokensOf(dropped) + estimateText(previous ?? '');
    const keptTokens = [...after].reduce((sum, i) => sum + weight(i), 0);
    const room = Math.floor((this.#limit - this.#fixed()) / this.#scale - keptTokens);
    let bound = Math.min(summaryBound(this.options.window) / this.#scale, replaced * 0.8);
    bound = Math.max(0, Math.floor(Math.min(bound, final ? room : Math.max(room, MIN_SUMMARY))));
    const { text, why } = await this.#summaryText(dropped, previous, bound);
    marker.summary = text;
    if (why) marker.outline = why;
    const size = `about ${fmt(replaced * this.#scale)} → ${fmt(estimateText(text) * this.#scale)} tokens`;
    const what = steps
      ? `${dropped.length} message(s), this turn's earlier steps among them,`
      : `${dropped.length} earlier message(s)`;
    this.#record(
      marker,
      !text
        ? `${what} left out of the request: no room was left for a summary (they are whole in the transcript)`
        : why
          ? `${what} outlined by niffler instead of summarized (${size}): ${why}; they are whole in the transcript, and /compact asks the model again`
          : `${what} summarized (${size})`,
    );
  }

  /** The model's summary within `bound`; niffler's outline when the model fails. */
  async #summaryText(
    part: ChatMessage[],
    previous: string | undefined,
    bound: number,
  ): Promise<{ text: string; why?: string }> {
    if (bound < 16) return { text: '' };
    try {
      const text = await modelSummary(
        this.options.summarizer,
        part,
        previous,
        bound,
        this.options.force?.focus,
        this.options.signal,
      );
      return { text };
    } catch (error) {
      if (this.options.signal.aborted) throw error;
      const why = `the summary model failed: ${(error as Error).message.split('\n')[0]}`;
      return { text: outline(part, previous, why, bound), why };
    }
  }

  /** The system prompt, the tools and the newest user message alone pass the limit. */
  #aloneTooLarge(): boolean {
    const { user } = this.#newest();
    const message = this.#history[user];
    const tokens = message?.role === 'user' ? messageTokens(message) * this.#scale : 0;
    return this.#fixed() + tokens > this.#limit;
  }

  /** Why the request cannot fit: the newest user message alone is too large, or the tools. */
  #tooLarge(): string {
    const { window, reserve } = this.options;
    const model = this.options.model ?? 'this model';
    const fixed = this.#fixed();
    const grow = (n: number) => Math.ceil(n * (1 + ESTIMATE_MARGIN));
    const { user } = this.#newest();
    const message = Math.round(messageTokens(this.#history[user]!) * this.#scale);
    const larger = `use a model with a larger window (models.${this.options.model ?? '<name>'}.contextWindow)`;
    if (grow(fixed) + reserve >= window)
      return (
        `the system prompt and tool definitions alone (about ${fmt(this.#view.use.system + this.#view.use.instructions)} + ${fmt(this.#view.use.tools)} tokens) ` +
        `leave no room in the ${fmt(window)}-token window of ${model} once ${fmt(reserve)} are kept for the answer: ` +
        `switch servers off (/tools, or mcpServers.NAME.enabled: false), defer their tools (tools.search: always), or ${larger}`
      );
    const need = grow(fixed + message) + reserve;
    const over = Math.max(1, need - window);
    return (
      `your message is too large for the model's context window: about ${fmt(message)} tokens, which with the system prompt and tool definitions ` +
      `(about ${fmt(fixed)}) and ${fmt(reserve)} kept for the answer need about ${fmt(need)} of the ${fmt(window)}-token window of ${model} — ` +
      `about ${fmt(over)} too many. Everything older is already compacted, so /compact cannot make room: cut the pasted text ` +
      `(by about ${fmt(Math.ceil((over / this.#scale) * 4))} characters) or send it in parts, or ${larger}. The session goes on.`
    );
  }
}
