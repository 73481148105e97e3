import { describe, expect, it } from 'vitest';
import { ContextKeeper } from '../../../src/main/engine/context/keeper.ts';
import type { ChatMessage } from '../../../src/workers/protocol/api.ts';

const turns = (n: number, size = 4000): ChatMessage[] =>
  Array.from({ length: n }, (_, t): ChatMessage[] => [
    { role: 'user', content: `question ${t}` },
    { role: 'assistant', content: `answer ${t} ${'x'.repeat(size)}` },
  ]).flat();

const keeper = (summary: string) =>
  new ContextKeeper({ saveOutput: (id) => `/o/${id}`, summarize: async () => summary });

const options = {
  window: 8000,
  reserve: 1000,
  threshold: 0.8 as const,
  signal: new AbortController().signal,
};

describe('fitting a request to the window', () => {
  it('says clearly when even the system prompt and tools do not fit, and how to go on', async () => {
    const tools = [{ name: 'big', description: 'x'.repeat(40_000), inputSchema: {} }];
    await expect(
      keeper('s').fit(
        { history: turns(1, 10), system: 'sys', instructionChars: 0, tools },
        options,
      ),
    ).rejects.toThrow(
      /does not fit the model's context window even compacted .* use a model with a larger window/,
    );
  });

  it('rejects a summary that is not smaller than what it replaces: no marker', async () => {
    const k = keeper('y'.repeat(100_000));
    await expect(
      k.fit({ history: turns(12), system: 'sys', instructionChars: 0, tools: [] }, options),
    ).rejects.toThrow(/does not fit/);
    expect(k.markers.filter((m) => m.summary !== undefined)).toEqual([]);
  });

  it('a model that reports no usage leaves the estimate as it is', () => {
    const k = keeper('s');
    k.calibration.learn(1000, { inputTokens: 0, outputTokens: 0 });
    expect(k.calibration.scale).toBe(1);
    k.calibration.learn(1000, { inputTokens: 1500, outputTokens: 3 });
    expect(k.calibration.scale).toBe(1.5);
  });
});
