import { randomBytes, randomUUID } from 'node:crypto';
import {
  createRequestStateCodec,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  type InputRequest,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { whenAborted } from '../../workers/shared/abort.ts';

/** How long an exchange waits for its consumer's next round before it is given up. */
const EXCHANGE_TTL_MS = 10 * 60_000;

/** What the work of an exchange uses to ask its consumer something (an approval, an input). */
export interface Asker {
  /** Asks `request` in the consumer's next round; resolves with its response (untrusted). */
  ask(request: InputRequest): Promise<unknown>;
  signal: AbortSignal;
  /** The consumer's request of the round that runs now (its progress token, its stream). */
  round(): ServerContext | undefined;
}

/**
 * One request whose answer may need the consumer's input on the way — an approval, or a backing
 * server's elicitation or sampling — in the 2026-07-28 multi-round-trip way: each round that
 * needs input ends with `input_required` (the SDK's legacy shim turns that into requests to a
 * 2025 consumer), and the consumer's next round brings the answers while the work waits.
 */
export class Exchange<R> {
  readonly id = randomUUID();
  readonly controller = new AbortController();
  readonly result: Promise<R>;
  /** The consumer's request of the current round. */
  current: ServerContext | undefined;
  /** Rounds that ended with `input_required`: the one whose `requestState` may come back. */
  rounds = 0;
  readonly #pending = new Map<string, { request: InputRequest; answer: (r: unknown) => void }>();
  #wake: () => void = () => {};
  #settled = false;
  #next = 0;

  constructor(
    work: (asker: Asker) => Promise<R>,
    readonly owner: string,
    first: ServerContext,
  ) {
    this.current = first;
    const asker: Asker = {
      ask: (request) => this.#ask(request),
      signal: this.controller.signal,
      round: () => this.current,
    };
    this.result = work(asker).finally(() => {
      this.#settled = true;
      this.#wake();
    });
  }

  #ask(request: InputRequest): Promise<unknown> {
    return new Promise((resolve) => {
      const key = `q${++this.#next}`;
      this.#pending.set(key, { request, answer: resolve });
      this.#wake();
    });
  }

  /** Hands the consumer's responses of this round to what waits for them. */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, response] of Object.entries(responses ?? {})) {
      const pending = this.#pending.get(key);
      if (!pending) continue;
      this.#pending.delete(key);
      pending.answer(response);
    }
  }

  /**
   * Waits until the work is done (`done`) or needs input (`input`: the questions of this round,
   * gathered for one turn of the event loop so that siblings asked together travel together).
   * Aborting `signal` (the consumer cancelled the request) ends the work.
   */
  async next(signal: AbortSignal): Promise<'done' | Record<string, InputRequest>> {
    // A consumer gone before this round got here (its request's signal aborted already) ends the
    // work at once: else a call nobody waits for runs on, holding its server's slot.
    const off = whenAborted(signal, () => this.abort());
    try {
      while (!this.#settled && this.#pending.size === 0)
        await new Promise<void>((resolve) => (this.#wake = resolve));
      if (this.#settled) return 'done';
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#settled) return 'done';
      return Object.fromEntries([...this.#pending].map(([key, p]) => [key, p.request]));
    } finally {
      off();
    }
  }

  /** Ends the work (its backing call is cancelled); what it waits for is answered as cancelled. */
  abort(): void {
    this.controller.abort();
    for (const [key, pending] of this.#pending) {
      this.#pending.delete(key);
      pending.answer({ action: 'cancel' });
    }
  }
}

/** The exchanges waiting for their consumers' next round, and the seal on their `requestState`. */
export class Exchanges {
  readonly #waiting = new Map<string, { exchange: Exchange<unknown>; timer: NodeJS.Timeout }>();
  readonly #codec = createRequestStateCodec<{ x: string; r: number }>({
    key: randomBytes(32),
    ttlSeconds: EXCHANGE_TTL_MS / 1000,
  });

  /** The `requestState.verify` of the gateway's servers: a tampered or expired state is refused. */
  readonly verify = (state: string, ctx: ServerContext) => this.#codec.verify(state, ctx);

  /**
   * Runs one round of `exchange` (or of the one its `requestState` names): the consumer's answers
   * go to the work, then either its result (`finish`) or `input_required` for the next round.
   */
  async round<R, T>(
    ctx: ServerContext,
    owner: string,
    start: (ctx: ServerContext) => Exchange<R>,
    finish: (result: R) => T,
  ): Promise<T | InputRequiredResult> {
    const state = ctx.mcpReq.requestState<{ x: string; r: number }>();
    const waiting = state ? this.#waiting.get(state.x)?.exchange : undefined;
    if (state && (!waiting || waiting.owner !== owner))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'requestState names an exchange that has ended (or is not yours): send the request anew',
      );
    // A state of an earlier round (replayed): the exchange waits on for its latest one.
    if (state && waiting && waiting.rounds !== state.r)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `requestState is of round ${state.r}, and this exchange is at round ${waiting.rounds}: send the latest requestState`,
      );
    const known = state ? this.#take(state.x) : undefined;
    const exchange = (known as Exchange<R> | undefined) ?? start(ctx);
    exchange.current = ctx;
    exchange.answer(ctx.mcpReq.inputResponses);
    const next = await exchange.next(ctx.mcpReq.signal);
    if (next === 'done') return finish(await exchange.result);
    // Until the consumer's next round comes, or it never does: then the work is ended.
    const timer = setTimeout(() => this.#take(exchange.id)?.abort(), EXCHANGE_TTL_MS);
    timer.unref();
    this.#waiting.set(exchange.id, { exchange: exchange, timer });
    // Each round's state is its own (the exchange and the round's number, sealed).
    return inputRequired({
      inputRequests: next,
      requestState: await this.#codec.mint({ x: exchange.id, r: ++exchange.rounds }),
    });
  }

  #take(id: string): Exchange<unknown> | undefined {
    const waiting = this.#waiting.get(id);
    if (!waiting) return undefined;
    clearTimeout(waiting.timer);
    this.#waiting.delete(id);
    return waiting.exchange;
  }

  /** Ends every waiting exchange (the gateway closes). */
  close(): void {
    for (const id of [...this.#waiting.keys()]) this.#take(id)?.abort();
  }
}
