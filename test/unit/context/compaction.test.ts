import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/workers/protocol/api.ts';
import {
  applyCompaction,
  clearedStub,
  outputsToClear,
  summarySplit,
} from '../../../src/main/engine/context/compaction.ts';
import { summaryRequest } from '../../../src/main/engine/context/summary.ts';

/** A session of `turns` turns, each: user, assistant tool call, tool result (`size` chars), answer. */
const session = (turns: number, size = 2000): ChatMessage[] =>
  Array.from({ length: turns }, (_, t): ChatMessage[] => [
    { role: 'user', content: `question ${t}` },
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: `c${t}`, name: 'read_file', args: { path: `f${t}` } }],
    },
    {
      role: 'tool',
      toolCallId: `c${t}`,
      name: 'read_file',
      result: { ok: true, output: 'x'.repeat(size) },
    },
    { role: 'assistant', content: `answer ${t}` },
  ]).flat();

describe('compaction', () => {
  it('clears old tool outputs beyond a protected tail, biggest first, until enough is saved', () => {
    const messages = session(6);
    const all = outputsToClear(messages, new Set(), 1200, 0);
    expect(all.map((m) => m.toolCallId)).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(outputsToClear(messages, new Set(['c0']), 1200, 600).map((m) => m.toolCallId)).toEqual([
      'c1',
      'c2',
    ]);
  });

  it('splits only at a user message, so a tool call is never parted from its result', () => {
    const messages = session(5);
    const split = summarySplit(messages, 1200)!;
    expect(messages[split]!.role).toBe('user');
    expect(split).toBe(12);
    expect(summarySplit(session(1), 10)).toBeUndefined();
  });

  it('replays markers: stubs for cleared outputs, the summary in place of what it replaced', () => {
    const messages = session(3);
    const { messages: view, summary } = applyCompaction(messages, [
      { cleared: [{ id: 'c1', file: '/o/c1.txt' }] },
      { cleared: [], summarizedTurns: 1, summary: 'they asked about f0' },
    ]);
    expect(summary).toBe('they asked about f0');
    expect(view[0]).toEqual({ role: 'user', content: 'question 1' });
    expect(view[2]).toMatchObject({
      role: 'tool',
      toolCallId: 'c1',
      result: { ok: true, output: clearedStub('/o/c1.txt') },
    });
    expect(view).toHaveLength(8);
    // Every call in the view has its result.
    const calls = view.flatMap((m) =>
      m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [],
    );
    const results = view.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
    expect(results).toEqual(calls);
  });

  it("replays a summary of a turn's earlier steps: the user message, then its later steps whole", () => {
    // One turn of three steps: user, [assistant call c0, result], [call c1, result], [call c2, result], answer.
    const turn: ChatMessage[] = [
      { role: 'user', content: 'do it' },
      ...[0, 1, 2].flatMap((n): ChatMessage[] => [
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: `c${n}`, name: 'read_file', args: { path: `f${n}` } }],
        },
        {
          role: 'tool',
          toolCallId: `c${n}`,
          name: 'read_file',
          result: { ok: true, output: `out ${n}` },
        },
      ]),
      { role: 'assistant', content: 'done' },
    ];
    const messages = [...session(2), ...turn];
    const { messages: view, summary } = applyCompaction(messages, [
      { cleared: [], summarizedTurns: 2, summarizedSteps: 4, summary: 'read f0 and f1' },
    ]);
    expect(summary).toBe('read f0 and f1');
    expect(view.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(view[1]).toMatchObject({ toolCalls: [{ id: 'c2' }] });
    expect(view[2]).toMatchObject({ toolCallId: 'c2' });
  });

  it('asks for goals, decisions, files, open tasks, with the focus and the previous summary', () => {
    const [system, user] = summaryRequest(session(1), 'earlier summary', 'the auth bug').map((m) =>
      (m.role === 'system' || m.role === 'user') && typeof m.content === 'string' ? m.content : '',
    );
    expect(system).toContain('Goals');
    expect(system).toContain('Open tasks');
    expect(system).toContain('Focus on: the auth bug.');
    expect(user).toContain('Summary of what came before:\nearlier summary');
    expect(user).toContain('TOOL read_file: xxx');
  });
});
