import { describe, expect, it } from 'vitest';
import { Exchange, Exchanges } from '../../../src/main/gateway/exchange.ts';
import { whenAborted } from '../../../src/workers/shared/abort.ts';

/** A round's context as the SDK's server gives it: no state, no answers, the request's signal. */
const contextWith = (signal: AbortSignal) =>
  ({ mcpReq: { requestState: () => undefined, inputResponses: undefined, signal } }) as never;

/** One round of work that runs until it is cancelled (as a call of a tool that waits does). */
const roundUntilCancelled = (signal: AbortSignal) =>
  new Exchanges().round(
    contextWith(signal),
    'consumer:tool',
    (first) =>
      new Exchange(
        (asker) =>
          new Promise<string>((resolve) => whenAborted(asker.signal, () => resolve('stopped'))),
        'consumer:tool',
        first,
      ),
    (r) => r,
  );

describe("a gateway call's exchange", () => {
  it('is ended at once when its consumer was gone before the round began (its signal aborted already)', async () => {
    const gone = new AbortController();
    gone.abort();
    const result = await roundUntilCancelled(gone.signal);
    expect(result).toBe('stopped');
  });

  it('is ended when its consumer goes away during the round', async () => {
    const leaving = new AbortController();
    const round = roundUntilCancelled(leaving.signal);
    leaving.abort();
    expect(await round).toBe('stopped');
  });
});

describe('whenAborted', () => {
  it('calls its listener once: at once for a signal that aborted already, else when it aborts; and can be taken back', () => {
    const calls: string[] = [];
    const done = new AbortController();
    done.abort();
    whenAborted(done.signal, () => calls.push('already'));
    const later = new AbortController();
    whenAborted(later.signal, () => calls.push('later'));
    const off = whenAborted(later.signal, () => calls.push('taken back'));
    off();
    later.abort();
    later.abort();
    whenAborted(undefined, () => calls.push('never'));
    expect(calls).toEqual(['already', 'later']);
  });
});
