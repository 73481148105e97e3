import type { ChatMessage, ToolSpec, Usage } from '../../../workers/protocol/api.ts';
import type { ContextUse } from '../../protocol.ts';

export type { ContextUse } from '../../protocol.ts';

// Token accounting: what a request costs of the context window, and on what. Providers report
// the tokens a request took; between reports a local estimate (4 characters a token, scaled by
// how far off it was at the last report) stands in.

/** Tokens an image is counted as (providers charge ~800–1600 for a typical screenshot). */
const IMAGE_TOKENS = 1200;

export const estimateText = (text: string): number => Math.ceil(text.length / 4);

/** What JSON values weigh, kept per value: a history's tool calls and a request's tool definitions
 * are measured at every step of every turn, and never change once made. */
const jsonTokens = new WeakMap<object, number>();

/** Tokens of `value` as JSON, measured once per value. */
const estimateJson = (value: object): number => {
  let tokens = jsonTokens.get(value);
  if (tokens === undefined) {
    tokens = estimateText(JSON.stringify(value));
    jsonTokens.set(value, tokens);
  }
  return tokens;
};

/** What one message weighs, before scaling. */
export const messageTokens = (message: ChatMessage): number => {
  switch (message.role) {
    case 'system':
      return estimateText(message.content);
    case 'user':
      return typeof message.content === 'string'
        ? estimateText(message.content)
        : message.content.reduce(
            (sum, part) => sum + (part.type === 'text' ? estimateText(part.text) : IMAGE_TOKENS),
            0,
          );
    case 'assistant':
      return (
        estimateText(message.content) + (message.toolCalls ? estimateJson(message.toolCalls) : 0)
      );
    case 'tool': {
      const { result } = message;
      const text = result.ok ? result.output : `${result.error.message}${result.output ?? ''}`;
      const images = (result.content ?? []).filter((c) => c.type === 'image').length;
      return estimateText(text) + images * IMAGE_TOKENS + 8;
    }
  }
};

interface RequestParts {
  system: string;
  /** Characters of `system` that are instruction files and server instructions. */
  instructionChars: number;
  /** Characters of `system` that are the summary section. */
  summaryChars?: number;
  messages: readonly ChatMessage[];
  tools: readonly ToolSpec[];
}

/** Estimates a request's use, scaled by `scale` (see `Calibration`). */
export const measure = (parts: RequestParts, scale = 1): ContextUse => {
  const instructions = Math.ceil(parts.instructionChars / 4);
  const summary = Math.ceil((parts.summaryChars ?? 0) / 4);
  const system = Math.max(0, estimateText(parts.system) - instructions - summary);
  const tools = parts.tools.length ? estimateJson(parts.tools) : 0;
  let messages = 0;
  let toolOutputs = 0;
  for (const message of parts.messages)
    if (message.role === 'tool') toolOutputs += messageTokens(message);
    else messages += messageTokens(message);
  return scaleUse({ system, instructions, summary, tools, messages, toolOutputs, total: 0 }, scale);
};

/** `use` (unscaled) scaled by `scale`, each part rounded and the total their sum. */
export const scaleUse = (use: ContextUse, scale: number): ContextUse => {
  const s = (n: number) => Math.round(n * scale);
  const scaled = {
    system: s(use.system),
    instructions: s(use.instructions),
    summary: s(use.summary),
    tools: s(use.tools),
    messages: s(use.messages),
    toolOutputs: s(use.toolOutputs),
  };
  return {
    ...scaled,
    total:
      scaled.system +
      scaled.instructions +
      scaled.summary +
      scaled.tools +
      scaled.messages +
      scaled.toolOutputs,
  };
};

/**
 * The scale assumed for a model not heard from yet: its count taken as 1.4 times the estimate
 * (2.9 characters a token). Real tokenizers count English prose at about 4 characters a token,
 * code at 3 to 3.5 and JSON schemas nearer 3; 1.4 covers all of them, so the first request of a
 * session is not the one that overflows.
 */
export const UNCALIBRATED_SCALE = 1.4;

/**
 * Share added on top of every scaled estimate before it is held against the window: the scale
 * is learnt from the last request, and the next one mixes prose, code and JSON in other
 * proportions (after a compaction, the tool definitions weigh more in it), so its true count
 * strays from the scaled estimate — by up to 8 % in the long sessions tested; 10 % is kept.
 */
export const ESTIMATE_MARGIN = 0.1;

/**
 * How far the estimate is from what one model's provider counts, learnt from each report: the
 * next estimates are scaled by it (within 0.5–3, so one odd report cannot make nonsense of them).
 * Until the first report, `UNCALIBRATED_SCALE`.
 */
export class Calibration {
  scale = UNCALIBRATED_SCALE;
  calibrated = false;

  /** A request estimated at `estimated` (unscaled) was reported as `usage`. */
  learn(estimated: number, usage: Usage): void {
    this.learnCount(estimated, usage.inputTokens + (usage.cacheReadTokens ?? 0));
  }

  /** A request estimated at `estimated` (unscaled) was counted as `counted` by the provider. */
  learnCount(estimated: number, counted: number): void {
    if (counted > 0 && estimated > 0) {
      this.scale = Math.min(3, Math.max(0.5, counted / estimated));
      this.calibrated = true;
    }
  }
}

/** The calibrations of the models a daemon talks to, by model (provider, URL and id). */
export class Calibrations {
  readonly #byModel = new Map<string, Calibration>();

  of(model: { provider: string; baseUrl: string; model: string }): Calibration {
    const key = `${model.provider} ${model.baseUrl} ${model.model}`;
    let found = this.#byModel.get(key);
    if (!found) {
      found = new Calibration();
      this.#byModel.set(key, found);
    }
    return found;
  }
}

/**
 * The prompt's token count a provider gives when it refuses a request over the window: OpenAI
 * ("your messages resulted in N tokens"), vLLM ("your request has N input tokens"; older: "N in
 * the messages"), Anthropic ("prompt is too long: N tokens > M maximum"), llama.cpp ("request (N
 * tokens) exceeds the available context size"). Undefined when it gives none.
 */
export const countInOverflow = (message: string): number | undefined => {
  const patterns = [
    /messages resulted in (\d+) tokens/i,
    /request has (\d+) input tokens/i,
    /(\d+) in the messages/i,
    /prompt is too long: (\d+) tokens/i,
    /request \((\d+) tokens\)/i,
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(message)?.[1];
    if (found) return Number(found);
  }
  return undefined;
};
