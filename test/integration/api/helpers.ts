import { afterAll, afterEach, beforeEach } from 'vitest';
import { ApiHost } from '../../../src/main/threads/api.ts';
import type {
  ChatMessage,
  LlmEvent,
  ModelSpec,
  Provider,
  StreamRequest,
  ToolSpec,
} from '../../../src/workers/protocol/api.ts';
import { startFakeLlm, type FakeLlm } from '../../fixtures/fake-llm/server.ts';

/** A model pointing at the fake server, with retry waits of a few milliseconds. */
export const specFor = (
  provider: Provider,
  llm: FakeLlm,
  overrides: Partial<ModelSpec> = {},
): ModelSpec => ({
  name: `fake-${provider}`,
  provider,
  baseUrl: provider === 'openai' ? `${llm.url}/v1` : llm.url,
  model: 'fake-model',
  apiKey: 'sk-test',
  apiKeyEnv: 'FAKE_KEY',
  toolProtocol: 'native',
  vision: false,
  reasoning: false,
  retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 },
  stallTimeoutMs: 10_000,
  ...overrides,
});

export const READ_FILE: ToolSpec = {
  name: 'read_file',
  description: 'Reads a file.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

export const request = (
  model: ModelSpec,
  messages: ChatMessage[] = [{ role: 'user', content: 'hi' }],
  tools: ToolSpec[] = [READ_FILE],
): StreamRequest => ({ model, messages, tools });

/** Reads a stream to its end: the events, and the error it threw if any. */
export const collect = async (
  stream: AsyncIterable<LlmEvent>,
): Promise<{ events: LlmEvent[]; error?: Error & { code?: string } }> => {
  const events: LlmEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events };
  } catch (error) {
    return { events, error: error as Error & { code?: string } };
  }
};

export const textOf = (events: LlmEvent[]): string =>
  events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');

export const reasoningOf = (events: LlmEvent[]): string =>
  events.flatMap((e) => (e.type === 'reasoning' ? [e.text] : [])).join('');

export const callsOf = (events: LlmEvent[]) =>
  events.flatMap((e) => (e.type === 'tool-call' ? [e.call] : []));

export type { ApiHost };

/**
 * One API host for the file and a fresh fake LLM server per test: `set` receives each new server.
 * Returns the host; everything is closed after the tests.
 */
export const withFakeLlm = (set: (llm: FakeLlm) => void): ApiHost => {
  const host = new ApiHost();
  let current: FakeLlm | undefined;
  beforeEach(async () => {
    current = await startFakeLlm();
    set(current);
  });
  afterEach(() => current?.close());
  afterAll(() => host.close());
  return host;
};
