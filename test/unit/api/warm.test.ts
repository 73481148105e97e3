import { describe, expect, it } from 'vitest';
import type { ModelSpec, Provider } from '../../../src/workers/protocol/api.ts';
import { warmStream } from '../../../src/workers/api/warm.ts';

// The API worker warms a first turn's request path by streaming one answer from a loopback stub
// in the provider's wire format. The model's real endpoint is an address that answers nothing
// (TEST-NET-3): were the warm-up sent there, it would never end, not end well.
const spec = (provider: Provider): ModelSpec => ({
  name: 'warm-test',
  provider,
  baseUrl: provider === 'ollama' ? 'http://203.0.113.7:11434' : 'http://203.0.113.7/v1',
  model: 'some-model',
  apiKey: 'sk-real-key-that-must-not-travel',
  vision: false,
  toolProtocol: 'native',
  reasoning: false,
  retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
  stallTimeoutMs: 5000,
});

describe('warming the request path', () => {
  it.each(['openai', 'anthropic', 'ollama'] as const)(
    '%s: streams a whole answer from the loopback stub, never from the model',
    async (provider) => {
      const problems: string[] = [];
      const ended = await warmStream(spec(provider), (_level, msg, data) =>
        problems.push(`${msg} ${JSON.stringify(data)}`),
      );
      expect(problems).toEqual([]);
      expect(ended).toBe(true);
    },
  );
});
