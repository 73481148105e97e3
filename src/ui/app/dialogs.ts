import type { EngineApi as EngineClient } from './deferred-client.ts';
import type { Action, Dialog, DialogAnswer } from './state/types.ts';
import { whenAborted } from '../../workers/shared/abort.ts';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Dialogs the engine's questions open, each settled once by the user's answer or its fallback. */
export class Dialogs {
  readonly #answers = new Map<string, (answer: DialogAnswer) => void>();
  #next = 1;

  constructor(private readonly dispatch: (action: Action) => void) {}

  /** Shows a dialog and resolves with the user's answer (or `fallback` when `signal` aborts). */
  readonly ask = (
    dialog: DistributiveOmit<Dialog, 'id'>,
    fallback: DialogAnswer,
    signal?: AbortSignal,
  ): Promise<DialogAnswer> =>
    new Promise<DialogAnswer>((resolve) => {
      const id = `d${this.#next++}`;
      const settle = (answer: DialogAnswer) => {
        if (!this.#answers.delete(id)) return;
        this.dispatch({ type: 'dialog-close', id });
        resolve(answer);
      };
      this.#answers.set(id, settle);
      this.dispatch({ type: 'dialog-open', dialog: { ...dialog, id } });
      whenAborted(signal, () => settle(fallback));
    });

  answer(id: string, answer: DialogAnswer): void {
    this.#answers.get(id)?.(answer);
  }
}

/** The engine's questions (approval, elicitation, sampling), each as a dialog. */
export const answerQuestions = (client: EngineClient, { ask }: Dialogs): void => {
  client.onRequest('approval/ask', async (question, signal) => {
    const answer = await ask(
      { kind: 'approval', ask: question },
      { kind: 'approval', answer: 'deny' },
      signal,
    );
    return { answer: answer.kind === 'approval' ? answer.answer : 'deny' };
  });
  client.onRequest('elicitation/ask', async ({ server, elicitation }, signal) => {
    const answer = await ask(
      { kind: 'elicitation', server, elicitation },
      { kind: 'elicitation', answer: { action: 'cancel' } },
      signal,
    );
    return answer.kind === 'elicitation' ? answer.answer : { action: 'cancel' };
  });
  client.onRequest('sampling/ask', async ({ server, summary, maxTokens }, signal) => {
    const answer = await ask(
      { kind: 'sampling', server, summary, maxTokens },
      { kind: 'sampling', approve: false },
      signal,
    );
    return { approve: answer.kind === 'sampling' && answer.approve };
  });
};
