import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness, toolMessages } from './harness.ts';

describe('a search in a turn', () => {
  it("shows its progress on the call's line, and the model gets the whole answer", async () => {
    const h = await startHarness('in-process');
    for (let i = 0; i < 40; i++) h.file(`src/f${i}.ts`, `const x${i} = ${i}; // TODO ${i}\n`);
    h.llm.queue(
      reply().tool('grep', { pattern: 'TODO', output_mode: 'count' }, { id: 'call_grep' }),
      reply().text('done'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'count the TODOs')).outcome).toBe('answered');
    const progress = h.events.filter((e) => e.type === 'tool-progress');
    expect(progress.at(-1)).toMatchObject({
      type: 'tool-progress',
      id: 'call_grep',
      progress: 40,
      total: 40,
      message: '40 files searched, 40 found',
    });
    const [answer] = toolMessages(h.llm.requests[1]!.body);
    expect(String(answer!.content).split('\n')).toHaveLength(40);
  });
});
