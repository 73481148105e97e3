import type { ChatMessage, ToolSpec, Usage } from '../../../workers/protocol/api.ts';

// Token accounting: what a request costs of the context window, and on what. Providers report
// the tokens a request took; between reports a local estimate (4 characters a token, scaled by
// how far off it was at the last report) stands in.

/** Tokens an image is counted as (providers charge ~800–1600 for a typical screenshot). */
const IMAGE_TOKENS = 1200;

export const estimateText = (text: string): number => Math.ceil(text.length / 4);

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
        estimateText(message.content) +
        (message.toolCalls ? estimateText(JSON.stringify(message.toolCalls)) : 0)
      );
    case 'tool': {
      const { result } = message;
      const text = result.ok ? result.output : `${result.error.message}${result.output ?? ''}`;
      const images = (result.content ?? []).filter((c) => c.type === 'image').length;
      return estimateText(text) + images * IMAGE_TOKENS + 8;
    }
  }
};

/** How a request's tokens are spent, as `/context` shows it. */
export interface ContextUse {
  /** niffler's own instructions and git context. */
  system: number;
  /** Instruction files and servers' instructions. */
  instructions: number;
  /** Tool definitions sent with the request. */
  tools: number;
  /** User and assistant messages (tool calls included). */
  messages: number;
  /** Tool results. */
  toolOutputs: number;
  total: number;
}

export interface RequestParts {
  system: string;
  /** Characters of `system` that are instruction files and server instructions. */
  instructionChars: number;
  messages: readonly ChatMessage[];
  tools: readonly ToolSpec[];
}

/** Estimates a request's use, scaled by `scale` (see `Calibration`). */
export const measure = (parts: RequestParts, scale = 1): ContextUse => {
  const instructions = Math.ceil(parts.instructionChars / 4);
  const system = estimateText(parts.system) - instructions;
  const tools = parts.tools.length ? estimateText(JSON.stringify(parts.tools)) : 0;
  let messages = 0;
  let toolOutputs = 0;
  for (const message of parts.messages)
    if (message.role === 'tool') toolOutputs += messageTokens(message);
    else messages += messageTokens(message);
  const s = (n: number) => Math.round(n * scale);
  const use = {
    system: s(system),
    instructions: s(instructions),
    tools: s(tools),
    messages: s(messages),
    toolOutputs: s(toolOutputs),
  };
  return {
    ...use,
    total: use.system + use.instructions + use.tools + use.messages + use.toolOutputs,
  };
};

/**
 * How far the estimate is from what the provider counts, learnt from each report: the next
 * estimates are scaled by it (within 0.5–3, so one odd report cannot make nonsense of them).
 */
export class Calibration {
  scale = 1;

  /** A request estimated at `estimated` (unscaled) was reported as `usage`. */
  learn(estimated: number, usage: Usage): void {
    const reported = usage.inputTokens + (usage.cacheReadTokens ?? 0);
    if (reported > 0 && estimated > 0)
      this.scale = Math.min(3, Math.max(0.5, reported / estimated));
  }
}
