import { describe, expect, it } from 'vitest';
import { httpError, rateLimited, reply } from '../../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../../fixtures/fake-llm/server.ts';
import { collect, request, specFor, textOf, withFakeLlm } from './helpers.ts';

let llm: FakeLlm;
const host = withFakeLlm((started) => (llm = started));

describe.each(['openai', 'anthropic', 'ollama'] as const)('%s', (provider) => {
  it('retries a 429, honouring Retry-After (capped by maxDelayMs)', async () => {
    llm.queue(rateLimited(7), reply().text('after the wait'));
    const { events, error } = await collect(host.stream(request(specFor(provider, llm))));
    expect(error).toBeUndefined();
    expect(events[0]).toMatchObject({ type: 'retry', attempt: 1, retryAfterMs: 7000, delayMs: 5 });
    expect(textOf(events)).toBe('after the wait');
    expect(llm.requests).toHaveLength(2);
  });

  it('waits what retry-after-ms asks when it is under the cap', async () => {
    llm.queue(rateLimited(1, 20), reply().text('ok'));
    const spec = specFor(provider, llm, {
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1000 },
    });
    const { events } = await collect(host.stream(request(spec)));
    expect(events[0]).toMatchObject({ type: 'retry', delayMs: 20, retryAfterMs: 20 });
  });

  it('retries 5xx, then gives up with the last error (the client library does not retry)', async () => {
    llm.queue(httpError(500, 'boom 1'), httpError(503, 'boom 2'), httpError(502, 'boom 3'));
    const spec = specFor(provider, llm, {
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const { events, error } = await collect(host.stream(request(spec)));
    expect(events.map((e) => e.type)).toEqual(['retry', 'retry']);
    expect(error).toMatchObject({ code: 'llm-http' });
    expect(error?.message).toContain('HTTP 502');
    expect(error?.message).toContain('boom 3');
    expect(llm.requests).toHaveLength(3);
  });

  it('does not retry a 400', async () => {
    llm.queue(httpError(400, 'bad request body'));
    const { error } = await collect(host.stream(request(specFor(provider, llm))));
    expect(error).toMatchObject({ code: 'llm-http' });
    expect(error?.message).toContain('bad request body');
    expect(llm.requests).toHaveLength(1);
  });

  it('fails on a malformed chunk', async () => {
    llm.queue(reply().text('partial').malformed().text('never seen'));
    const { events, error } = await collect(host.stream(request(specFor(provider, llm))));
    expect(textOf(events)).toBe('partial');
    expect(error).toMatchObject({ code: 'llm-stream' });
    expect(error?.message).toMatch(/malformed/);
  });

  it('retries a reset before the first token', async () => {
    llm.queue(reply().reset(), reply().text('second try'));
    const { events, error } = await collect(host.stream(request(specFor(provider, llm))));
    expect(error).toBeUndefined();
    expect(events[0]).toMatchObject({ type: 'retry', attempt: 1 });
    expect(textOf(events)).toBe('second try');
  });

  it('fails, without retrying, on a reset mid-stream', async () => {
    llm.queue(reply().text('half an ans').reset(), reply().text('must not be used'));
    const { events, error } = await collect(host.stream(request(specFor(provider, llm))));
    expect(textOf(events)).toBe('half an ans');
    expect(error).toMatchObject({ code: 'llm-stream' });
    expect(error?.message).toMatch(/reset/);
    expect(llm.requests).toHaveLength(1);
  });

  it('times out a stream that goes silent', async () => {
    llm.queue(reply().text('thinking about it').hang());
    const spec = specFor(provider, llm, { stallTimeoutMs: 300 });
    const { events, error } = await collect(host.stream(request(spec)));
    expect(textOf(events)).toBe('thinking about it');
    expect(error).toMatchObject({ code: 'timeout' });
    expect(error?.message).toContain('sent nothing for 0.3s');
    expect(await llm.requests[0]!.closed).toEqual({ aborted: true });
  });

  it('retries a server that hangs before answering, then times out', async () => {
    llm.queue(reply().hang(), reply().hang());
    const spec = specFor(provider, llm, {
      stallTimeoutMs: 200,
      retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const { events, error } = await collect(host.stream(request(spec)));
    expect(events.map((e) => e.type)).toEqual(['retry']);
    expect(error).toMatchObject({ code: 'timeout' });
    expect(llm.requests).toHaveLength(2);
  });

  it('aborts the HTTP stream when the signal aborts mid-stream', async () => {
    llm.queue(reply().text('first words').hang());
    const controller = new AbortController();
    const seen: string[] = [];
    let caught: unknown;
    try {
      for await (const event of host.stream(request(specFor(provider, llm)), controller.signal)) {
        seen.push(event.type);
        if (event.type === 'text') controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(seen[0]).toBe('text');
    expect(caught).toMatchObject({ name: 'NifflerError', code: 'canceled' });
    expect(await llm.requests[0]!.closed).toEqual({ aborted: true });
  });

  it('aborts the HTTP stream when the caller stops reading', async () => {
    llm.queue(reply().text('first words').hang());
    for await (const event of host.stream(request(specFor(provider, llm)))) {
      if (event.type === 'text') break;
    }
    expect(await llm.requests[0]!.closed).toEqual({ aborted: true });
  });

  it('names the URL and how to configure a model when nothing listens', async () => {
    const gone = await startFakeLlm();
    await gone.close();
    const spec = specFor(provider, gone);
    const { error } = await collect(host.stream(request(spec)));
    expect(error).toMatchObject({ code: 'llm-unreachable' });
    expect(error?.message).toContain(spec.baseUrl);
    expect(error?.message).toContain('connection refused');
    expect(error?.message).toContain('`models:` in ~/.niffler/config.yaml');
    expect(error?.message).toContain('--model');
    const moved = await collect(
      host.stream(request(specFor(provider, gone, { configFile: '/srv/nf/config.yaml' }))),
    );
    expect(moved.error?.message).toContain('`models:` in /srv/nf/config.yaml');
  });
});

it('says which key to check on a 401', async () => {
  llm.queue(httpError(401, 'invalid x-api-key'));
  const { error } = await collect(host.stream(request(specFor('anthropic', llm))));
  expect(error?.message).toContain('Check the key in $FAKE_KEY');
});
