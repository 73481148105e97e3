import type { ModelSpec } from '../../../workers/protocol/api.ts';
import type { LlmStreamer } from '../step.ts';
import type { RequestView } from './keeper.ts';
import type { SummaryModel } from './summary.ts';
import { countInOverflow, ESTIMATE_MARGIN, type Calibration } from './tokens.ts';

// What a turn needs of the context module around one request: the answer's reserve, the model
// that writes summaries, the answer's `maxTokens` that the window still has room for, and what a
// provider's refusal of a request over the window teaches about its count.

/** A model resolved for a turn, with the context window it has. */
export type TurnModel = ModelSpec & { contextWindow: number };

/** Tokens kept free for the answer: the model's `maxTokens` (8,192 unset), at most ¼ of the window. */
export const answerReserve = (model: TurnModel): number =>
  Math.min(model.maxTokens ?? 8192, Math.floor(model.contextWindow * 0.25));

/**
 * `model` as the summary model: its window, its calibration, and a plain request (no tools) whose
 * answer is at most `maxTokens`. Its reports are not learnt from: a summary request is prose, the
 * turn's requests carry JSON tool definitions, and learning from the first would underestimate
 * the second.
 */
export const summaryModel = (
  model: TurnModel,
  calibration: Calibration,
  api: LlmStreamer,
): SummaryModel => ({
  window: model.contextWindow,
  scale: calibration.scale,
  ask: async (messages, maxTokens, signal) => {
    let text = '';
    for await (const event of api.stream(
      {
        model: {
          ...model,
          maxTokens: Math.min(maxTokens, model.maxTokens ?? maxTokens),
          toolProtocol: 'native',
        },
        messages,
        tools: [],
      },
      signal,
    ))
      if (event.type === 'text') text += event.text;
    return text;
  },
});

/**
 * The model of a fitted request with its configured `maxTokens` cut to what the window has left
 * once the request (with the margin) is in: OpenAI and vLLM refuse a request whose prompt and
 * `max_tokens` together pass the window. Never below the reserve the request was fitted with.
 */
export const withAnswerRoom = (model: TurnModel, view: RequestView): TurnModel => {
  if (model.maxTokens === undefined) return model;
  const room = model.contextWindow - Math.ceil(view.use.total * (1 + ESTIMATE_MARGIN));
  const floor = answerReserve(model);
  return room < model.maxTokens ? { ...model, maxTokens: Math.max(floor, room) } : model;
};

/**
 * After a provider refused `view` as over its window: learns its count when the message gives
 * it (so the next fitting holds to the provider's count), else assumes it was 15 % over.
 */
export const learnFromOverflow = (
  calibration: Calibration,
  error: unknown,
  view: RequestView,
  window: number,
): void => {
  const counted = countInOverflow(error instanceof Error ? error.message : String(error));
  calibration.learnCount(
    view.estimated,
    counted && counted > 0 ? counted : Math.max(window, view.use.total) * 1.15,
  );
};
