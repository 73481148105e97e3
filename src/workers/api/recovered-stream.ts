import type { LlmEvent, ModelSpec, ToolCallFamily, ToolSpec } from '../protocol/api.ts';
import { createRecovery, type Recovery, type RecoveryOptions } from './recovery/index.ts';

// Between a provider's events and the caller: the text and reasoning a model streams go through
// the recovery (recovery/), so calls written as text come out as calls; native calls pass by.

/**
 * The recovery a request gets: its families by the model's `toolCallFormat`, none for `none`.
 * Anthropic's API never passes call syntax through, so `auto` leaves it alone.
 */
export const recoveryOptions = (
  model: ModelSpec,
  tools: readonly ToolSpec[],
  protocol: 'native' | 'text',
  newId: () => string,
  hint?: ToolCallFamily,
): RecoveryOptions | undefined => {
  const format = model.toolCallFormat ?? 'auto';
  if (format === 'none' && protocol === 'native') return undefined;
  if (model.provider === 'anthropic' && format === 'auto' && protocol === 'native') return undefined;
  return {
    tools,
    format: format === 'none' ? 'niffler' : format,
    protocol,
    newId,
    ...(hint ? { hint } : {}),
  };
};

export class RecoveredStream {
  readonly #options: RecoveryOptions | undefined;
  readonly #content: Recovery | undefined;
  /** The reasoning channel's text since the answer last spoke. */
  #reasoning: Recovery | undefined;
  #reasoningCalls = 0;
  #native = 0;

  constructor(options: RecoveryOptions | undefined) {
    this.#options = options;
    this.#content = options && createRecovery(options);
  }

  /** Calls read from text are complete and what follows is not the answer: end the stream. */
  get stopped(): boolean {
    return this.#content?.stopped ?? false;
  }

  /** Calls read from text, in content and reasoning. */
  get calls(): number {
    return (this.#content?.calls ?? 0) + this.#reasoningCalls;
  }

  /** What one provider event (not `done`) becomes. */
  push(event: LlmEvent): LlmEvent[] {
    if (!this.#content || !this.#options) return [event];
    switch (event.type) {
      case 'text': {
        // The answer has begun: a call in the reasoning before it was the model thinking.
        const flushed = /\S/.test(event.text) ? this.#endReasoning(false) : [];
        return [...flushed, ...this.#content.feed(event.text)];
      }
      case 'reasoning':
        if (event.signature !== undefined) return [event];
        this.#reasoning ??= createRecovery({ ...this.#options, channel: 'reasoning' });
        return this.#reasoning.feed(event.text);
      case 'tool-call':
      case 'tool-call-invalid':
        this.#native++;
        return [event];
      default:
        return [event];
    }
  }

  /** The stream ended: what was held back. */
  end(): LlmEvent[] {
    if (!this.#content) return [];
    // A reply that is only a call in the reasoning channel: the server filed it there.
    const content = this.#content;
    const alone = !content.spoke && content.calls === 0 && this.#native === 0;
    return [...this.#endReasoning(alone), ...content.finish()];
  }

  /** The stream failed: the plain text held back, never a call's syntax. */
  abandon(): LlmEvent[] {
    const reasoning = this.#reasoning?.abandon() ?? [];
    this.#reasoning = undefined;
    return [...reasoning, ...(this.#content?.abandon() ?? [])];
  }

  #endReasoning(commit: boolean): LlmEvent[] {
    const reasoning = this.#reasoning;
    if (!reasoning) return [];
    this.#reasoning = undefined;
    const events = reasoning.finish(commit);
    this.#reasoningCalls += reasoning.calls;
    return events;
  }
}
