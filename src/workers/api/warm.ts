import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelSpec, Provider } from '../protocol/api.ts';
import type { WorkerLog } from './providers/provider.ts';
import { runStream } from './run.ts';

// A first request runs code no later one does: the client library's request building and
// streaming, our stream relay, their first compilation (15–20 ms on a 2-core machine, measured
// from the fitted request to the model receiving it). Warming runs one such request, in this
// worker, against a loopback stub that answers in the provider's wire format — nothing leaves
// the machine, no key is sent, nothing is billed.

const chunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'warm', object: 'chat.completion.chunk', created: 0, model: 'warm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const event = (type: string, data: object) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** The smallest streamed answer ("ok") of each provider. */
const ANSWERS: Record<Provider, { type: string; body: string }> = {
  openai: {
    type: 'text/event-stream',
    body: `${chunk({ role: 'assistant', content: 'ok' }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`,
  },
  anthropic: {
    type: 'text/event-stream',
    body:
      event('message_start', {
        message: {
          id: 'warm',
          type: 'message',
          role: 'assistant',
          model: 'warm',
          content: [],
          stop_reason: null,
          usage: { input_tokens: 1, output_tokens: 0 },
        },
      }) +
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } }) +
      event('content_block_stop', { index: 0 }) +
      event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }) +
      event('message_stop', {}),
  },
  ollama: {
    type: 'application/x-ndjson',
    body:
      `${JSON.stringify({ model: 'warm', message: { role: 'assistant', content: 'ok' }, done: false })}\n` +
      `${JSON.stringify({ model: 'warm', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 1, eval_count: 1 })}\n`,
  },
};

/** Streams one answer of `spec`'s provider from a loopback stub; whether it ended. Never throws. */
export const warmStream = async (spec: ModelSpec, log: WorkerLog): Promise<boolean> => {
  let ended = false;
  const answer = ANSWERS[spec.provider];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': answer.type });
      res.end(answer.body);
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const path = new URL(spec.baseUrl).pathname.replace(/\/$/, '');
    const model: ModelSpec = {
      ...spec,
      baseUrl: `http://127.0.0.1:${port}${path}`,
      apiKey: 'warm',
      headers: {},
    };
    await runStream(
      { model, messages: [{ role: 'user', content: 'warm' }], tools: [] },
      AbortSignal.timeout(5000),
      (event) => {
        if (event.type === 'done') ended = true;
      },
      () => undefined,
    );
  } catch (error) {
    log('debug', 'warming the request path did not complete', { error: String(error) });
  } finally {
    server.close();
    server.closeAllConnections();
  }
  return ended;
};
