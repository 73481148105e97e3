import { expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { FakeLlm } from '../../fixtures/fake-llm/server.ts';
import { collect, request, specFor, textOf, withFakeLlm } from './helpers.ts';

let llm: FakeLlm;
const host = withFakeLlm((started) => (llm = started));

it('fails pending streams with worker-exited when the worker dies, then starts a new one', async () => {
  llm.queue(
    reply().text('waiting').hang(),
    reply().text('waiting too').hang(),
    reply().text('fresh worker'),
  );
  const spec = specFor('openai', llm);
  const streams = [
    host.stream(request(spec))[Symbol.asyncIterator](),
    host.stream(request(spec))[Symbol.asyncIterator](),
  ];
  expect((await streams[0]!.next()).value).toMatchObject({ type: 'text' });
  expect((await streams[1]!.next()).value).toMatchObject({ type: 'text' });
  await host.terminateWorker();
  for (const stream of streams)
    await expect(stream.next()).rejects.toMatchObject({
      name: 'NifflerError',
      code: 'worker-exited',
    });
  const { events, error } = await collect(host.stream(request(spec)));
  expect(error).toBeUndefined();
  expect(textOf(events)).toBe('fresh worker');
});

it('runs streams side by side', async () => {
  llm.queue(reply().text('one'), reply().text('two'), reply().text('three'));
  const spec = specFor('anthropic', llm);
  const results = await Promise.all([1, 2, 3].map(() => collect(host.stream(request(spec)))));
  expect(results.map((r) => textOf(r.events)).sort()).toEqual(['one', 'three', 'two']);
});

it('rejects at once when the signal is already aborted', async () => {
  const controller = new AbortController();
  controller.abort();
  const { error } = await collect(host.stream(request(specFor('openai', llm)), controller.signal));
  expect(error).toMatchObject({ code: 'canceled' });
  expect(llm.requests).toHaveLength(0);
});
