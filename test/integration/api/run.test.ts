import { describe, expect, it } from 'vitest';
import type { LlmEvent } from '../../../src/workers/protocol/api.ts';
import { canceled, runStream } from '../../../src/workers/api/run.ts';
import { LlmFailure } from '../../../src/workers/api/failure.ts';
import { httpError, rateLimited, reply } from '../../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../../fixtures/fake-llm/server.ts';
import { request, specFor } from './helpers.ts';

// runStream in-process (the worker's side), to see exactly which events it emits.
describe.each(['openai', 'anthropic', 'ollama'] as const)('%s runStream', (provider) => {
  const run = async (abortOn: (event: LlmEvent) => unknown) => {
    const llm = await startFakeLlm();
    const controller = new AbortController();
    const events: LlmEvent[] = [];
    const emit = (event: LlmEvent) => {
      events.push(event);
      const reason = abortOn(event);
      if (reason !== undefined) controller.abort(reason);
    };
    return { llm, controller, events, emit };
  };

  it('a cancel during the retry wait ends the stream with the abort reason, with no second attempt', async () => {
    const { llm, controller, events, emit } = await run((e) =>
      e.type === 'retry' ? canceled() : undefined,
    );
    try {
      // A wait of a minute: the test only finishes if the abort cuts it short.
      llm.queue(rateLimited(60), reply().text('must not be used'));
      const spec = specFor(provider, llm, {
        retry: { maxRetries: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 },
      });
      await runStream(request(spec), controller.signal, emit, () => {});
      expect(events).toEqual([
        expect.objectContaining({ type: 'retry', attempt: 1, delayMs: 60_000 }),
        {
          type: 'error',
          error: { code: 'canceled', message: 'the request was canceled', data: {} },
        },
      ]);
      expect(llm.requests).toHaveLength(1);
    } finally {
      await llm.close();
    }
  });

  it('reports a custom abort reason given during the retry wait as it is', async () => {
    const reason = new LlmFailure('timeout', 'the turn ran out of time', { data: { why: 'test' } });
    const { llm, controller, events, emit } = await run((e) =>
      e.type === 'retry' ? reason : undefined,
    );
    try {
      llm.queue(httpError(503, 'busy'), reply().text('must not be used'));
      const spec = specFor(provider, llm, {
        retry: { maxRetries: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 },
      });
      await runStream(request(spec), controller.signal, emit, () => {});
      expect(events.map((e) => e.type)).toEqual(['retry', 'error']);
      expect(events[1]).toEqual({ type: 'error', error: reason.toWire() });
      expect(llm.requests).toHaveLength(1);
    } finally {
      await llm.close();
    }
  });

  it('an abort mid-stream emits no usage, gathered tool call or done after it, only the error', async () => {
    const { llm, controller, events, emit } = await run((e) =>
      e.type === 'text' ? canceled() : undefined,
    );
    try {
      // OpenAI's tool call is still being gathered at the abort; Anthropic's usage is still due.
      llm.queue(reply().tool('read_file', { path: 'a.ts' }).text('after the call').hang());
      await runStream(request(specFor(provider, llm)), controller.signal, emit, () => {});
      const aborted = events.findIndex((e) => e.type === 'text');
      expect(aborted).toBeGreaterThanOrEqual(0);
      // Text chunks already read before the abort may still come through.
      expect(events.slice(aborted + 1).filter((e) => e.type !== 'text')).toEqual([
        {
          type: 'error',
          error: { code: 'canceled', message: 'the request was canceled', data: {} },
        },
      ]);
      expect(await llm.requests[0]!.closed).toEqual({ aborted: true });
    } finally {
      await llm.close();
    }
  });

  it('an already aborted signal ends at once with the reason, sending nothing', async () => {
    const { llm, controller, events, emit } = await run(() => undefined);
    try {
      controller.abort(canceled());
      await runStream(request(specFor(provider, llm)), controller.signal, emit, () => {});
      expect(events).toEqual([
        {
          type: 'error',
          error: { code: 'canceled', message: 'the request was canceled', data: {} },
        },
      ]);
      expect(llm.requests).toHaveLength(0);
    } finally {
      await llm.close();
    }
  });
});
