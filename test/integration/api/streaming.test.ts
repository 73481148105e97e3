import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { FakeLlm } from '../../fixtures/fake-llm/server.ts';
import { callsOf, collect, reasoningOf, request, specFor, textOf, withFakeLlm } from './helpers.ts';

let llm: FakeLlm;
const host = withFakeLlm((started) => (llm = started));

describe.each(['openai', 'anthropic', 'ollama'] as const)('%s', (provider) => {
  it('streams text in several deltas and ends with done', async () => {
    llm.queue(reply().text('Hello, wörld ✓', { chunks: 4 }));
    const { events, error } = await collect(host.stream(request(specFor(provider, llm))));
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    expect(textOf(events)).toBe('Hello, wörld ✓');
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'end', toolProtocol: 'native' });
  });

  it('assembles a tool call split across chunks', async () => {
    const args = { path: 'src/a.ts', range: { start: 1, end: 20 }, note: 'quote " and } brace' };
    llm.queue(reply().text('Reading.').tool('read_file', args, { id: 'call_A', chunks: 7 }));
    const { events } = await collect(host.stream(request(specFor(provider, llm))));
    const calls = callsOf(events);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ name: 'read_file', args });
    expect(events.at(-1)).toMatchObject({ type: 'done', stopReason: 'tool-calls' });
  });

  it('reads parallel tool calls', async () => {
    llm.queue(
      reply()
        .tool('read_file', { path: 'a' }, { id: 'call_1' })
        .tool('read_file', { path: 'b' }, { id: 'call_2' })
        .tool('list', { dir: '.' }, { id: 'call_3' })
        .interleaveTools(),
    );
    const { events } = await collect(host.stream(request(specFor(provider, llm))));
    expect(callsOf(events).map((c) => [c.id, c.name, c.args])).toEqual([
      ['call_1', 'read_file', { path: 'a' }],
      ['call_2', 'read_file', { path: 'b' }],
      ['call_3', 'list', { dir: '.' }],
    ]);
  });

  it('surfaces reasoning and usage', async () => {
    llm.queue(reply().reasoning('Think first.').text('Answer.').usage(120, 34));
    const { events } = await collect(host.stream(request(specFor(provider, llm))));
    expect(reasoningOf(events)).toBe('Think first.');
    expect(textOf(events)).toBe('Answer.');
    expect(events.find((e) => e.type === 'usage')).toEqual({
      type: 'usage',
      usage: { inputTokens: 120, outputTokens: 34 },
    });
    const firstText = events.findIndex((e) => e.type === 'text');
    expect(events.findIndex((e) => e.type === 'reasoning')).toBeLessThan(firstText);
  });

  it('reports max-tokens as the stop reason', async () => {
    llm.queue(reply().text('cut sh').stop('max-tokens'));
    const { events } = await collect(host.stream(request(specFor(provider, llm))));
    expect(events.at(-1)).toMatchObject({ type: 'done', stopReason: 'max-tokens' });
  });

  it('turns unreadable tool arguments into an event the model can correct', async () => {
    llm.queue(reply().tool('read_file', '{"path": a.ts}', { id: 'call_bad' }));
    const { events, error } = await collect(host.stream(request(specFor(provider, llm))));
    expect(error).toBeUndefined();
    const invalid = events.find((e) => e.type === 'tool-call-invalid');
    expect(invalid).toMatchObject({ name: 'read_file', raw: '{"path": a.ts}' });
    expect(invalid?.type === 'tool-call-invalid' && invalid.message).toMatch(/not valid JSON/);
  });

  it('sends the key, custom headers, model and limits', async () => {
    llm.queue(reply().text('ok'));
    const spec = specFor(provider, llm, {
      headers: { 'x-team': 'niffler' },
      maxTokens: 321,
      temperature: 0.25,
    });
    await collect(host.stream(request(spec)));
    const [sent] = await llm.waitForRequests(1);
    expect(sent!.headers['x-team']).toBe('niffler');
    expect(sent!.body.model).toBe('fake-model');
    expect(sent!.headers['x-api-key'] ?? sent!.headers['authorization']).toMatch(/sk-test$/);
    if (provider === 'ollama')
      expect(sent!.body.options).toEqual({ num_predict: 321, temperature: 0.25 });
    else expect(sent!.body).toMatchObject({ max_tokens: 321, temperature: 0.25, stream: true });
  });
});
