import type { McpEvent } from '../../workers/protocol/mcp.ts';
import type { CallToolOptions, ElicitationHandler, SamplingHandler } from './mcp-types.ts';

// The servers' own requests (elicitation, sampling) as the MCP host answers them: by the handlers
// of the call they came during (its `asker` number), else the host's, else declined with a reason.

const NO_UI = 'no user interface is attached to answer it';

type Askers = Pick<CallToolOptions, 'onElicit' | 'onSample'>;
type ServerAsk = Extract<McpEvent, { type: 'elicitation-request' | 'sampling-request' }>;
type AnswerMessage = {
  type: 'elicitation-answer' | 'sampling-answer';
  requestId: number;
  answer: unknown;
};

export class McpAskers {
  /** Who answers `elicitation/create`; without one, requests are declined with a reason. */
  elicitation: ElicitationHandler | undefined;
  /** Who answers `sampling/createMessage`; without one, requests are declined with a reason. */
  sampling: SamplingHandler | undefined;
  /** Per-call handlers of the server's requests, by the call's `asker` number. */
  readonly #askers = new Map<number, Askers>();
  #next = 1;

  /** A number for a request with its own handlers of the server's requests (none without). */
  for(options: Askers): number | undefined {
    if (!options.onElicit && !options.onSample) return undefined;
    const asker = this.#next++;
    this.#askers.set(asker, { onElicit: options.onElicit, onSample: options.onSample });
    return asker;
  }

  /** `request`, after which `asker`'s handlers are forgotten. */
  until<T>(asker: number | undefined, request: Promise<T>): Promise<T> {
    return asker === undefined ? request : request.finally(() => this.#askers.delete(asker));
  }

  /** Answers a server's request through `post` (to the worker that asked). */
  answer(event: ServerAsk, post: (message: AnswerMessage) => void): void {
    if (event.type === 'elicitation-request')
      this.#answer(
        event.requestId,
        'elicitation-answer',
        async () => {
          const handler = this.#of(event.asker)?.onElicit ?? this.elicitation;
          return handler
            ? handler({ server: event.server, elicitation: event.elicitation })
            : { action: 'decline', reason: `elicitation declined: ${NO_UI}` };
        },
        (reason) => ({ action: 'decline', reason }),
        post,
      );
    else
      this.#answer(
        event.requestId,
        'sampling-answer',
        async () => {
          const handler = this.#of(event.asker)?.onSample ?? this.sampling;
          return handler
            ? handler({ server: event.server, params: event.params })
            : { ok: false, reason: `sampling is not available: ${NO_UI}` };
        },
        (reason) => ({ ok: false, reason }),
        post,
      );
  }

  #of(asker: number | undefined) {
    return asker === undefined ? undefined : this.#askers.get(asker);
  }

  #answer<A>(
    requestId: number,
    type: AnswerMessage['type'],
    produce: () => Promise<A>,
    onError: (reason: string) => A,
    post: (message: AnswerMessage) => void,
  ): void {
    produce()
      .catch((error: unknown) => onError(`the handler failed: ${(error as Error).message}`))
      .then((answer) => post({ type, requestId, answer }))
      .catch(() => undefined); // the worker may be gone; its request died with it
  }
}
