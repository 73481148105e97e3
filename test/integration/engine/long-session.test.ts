import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript } from '../../../src/main/engine/transcript.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness, toolMessages } from './harness.ts';

const WINDOW = 6000;

/** A request is a summary request when its system prompt asks for one. */
const isSummary = (request: RecordedRequest): boolean =>
  JSON.stringify(request.body.messages?.[0] ?? '').includes('You summarize a working session');

/** Every assistant tool call of an OpenAI request is followed by its results, and no result is orphaned. */
const paired = (body: {
  messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
}) => {
  const calls = body.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
  const results = body.messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
  return JSON.stringify(calls) === JSON.stringify(results);
};

const longSession = () =>
  startHarness('in-process', {
    mcp: '  {}\n',
    // Room for the answer: the window the fake enforces, in its own token count.
    model: `    toolProtocol: native\n    contextWindow: ${WINDOW}\n    maxTokens: 500\n`,
    config: 'agent:\n  git: false\n',
    llm: {
      contextWindow: WINDOW,
      route: (request) =>
        isSummary(request)
          ? reply().text(
              'Goals: read the notes files. Decisions: none. Files touched: notes-*.txt. Open tasks: none.',
            )
          : undefined,
    },
  });

describe('a long session never outgrows its model', () => {
  it('300 turns with large tool outputs: every request fits, every turn answers, nothing is lost from the transcript', async () => {
    const h = await longSession();
    for (let i = 0; i < 10; i++)
      h.file(`notes-${i}.txt`, `notes ${i}: ${'lorem ipsum dolor sit amet '.repeat(60)}\n`);
    const id = await h.open();
    for (let turn = 0; turn < 300; turn++) {
      if (turn % 10 === 0)
        h.llm.queue(
          reply().tool('read_file', { path: `notes-${(turn / 10) % 10}.txt` }),
          reply().text(`read notes ${turn}`),
        );
      else
        h.llm.queue(reply().text(`answer ${turn}: ${'the reply goes on for a while. '.repeat(6)}`));
      const summary = await h.prompt(
        id,
        `question ${turn}: ${'please consider the context. '.repeat(4)}`,
      );
      expect(summary.outcome, `turn ${turn}: ${summary.error ?? ''}`).toBe('answered');
    }
    const turns = h.llm.requests.filter((r) => !isSummary(r));
    expect(Math.max(...h.llm.requests.map((r) => r.tokens ?? 0))).toBeLessThanOrEqual(WINDOW);
    expect(turns.every((r) => paired(r.body))).toBe(true);
    expect(h.llm.requests.some(isSummary)).toBe(true);
    // The last request: the summary in the system prompt, the newest turns verbatim.
    const last = JSON.stringify(turns.at(-1)!.body);
    expect(last).toContain('Summary of the conversation so far');
    expect(last).toContain('question 299');
    const transcript = readTranscript(
      nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir,
      id,
    );
    expect(transcript.messages.filter((m) => m.role === 'user')).toHaveLength(300);
    expect(transcript.entries.some((e) => e.type === 'compaction')).toBe(true);
  }, 240_000);

  it('/compact with a focus: a marker, then a request with the summary and the recent turns, every call paired', async () => {
    const h = await longSession();
    h.file('a.txt', 'alpha\n');
    const id = await h.open();
    for (let turn = 0; turn < 4; turn++) {
      h.llm.queue(reply().tool('read_file', { path: 'a.txt' }), reply().text(`done ${turn}`));
      expect((await h.prompt(id, `turn ${turn}`)).outcome).toBe('answered');
    }
    const { notes } = await h.client.request('session/compact', {
      sessionId: id,
      focus: 'the alpha file',
    });
    expect(notes.join('\n')).toMatch(/earlier message\(s\) summarized/);
    const summaryRequest = h.llm.requests.filter(isSummary).at(-1)!;
    expect(JSON.stringify(summaryRequest.body)).toContain('Focus on: the alpha file.');
    h.llm.queue(reply().text('after compaction'));
    expect((await h.prompt(id, 'next')).outcome).toBe('answered');
    const body = h.llm.requests.at(-1)!.body;
    expect(JSON.stringify(body.messages[0])).toContain('Summary of the conversation so far');
    expect(JSON.stringify(body)).not.toContain('"turn 0"');
    expect(JSON.stringify(body)).toContain('turn 3');
    expect(paired(body)).toBe(true);
    expect(toolMessages(body).length).toBeGreaterThan(0);
    const transcript = readTranscript(
      nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir,
      id,
    );
    const marker = transcript.entries.find((e) => e.type === 'compaction' && e.marker.summary);
    expect(marker).toBeDefined();
    // Everything is still in the transcript: nothing was deleted.
    expect(transcript.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'turn 0',
      'turn 1',
      'turn 2',
      'turn 3',
      'next',
    ]);
    expect(path.isAbsolute(h.root)).toBe(true);
  });
});

describe('a compaction can be undone', () => {
  it('resuming at a turn before it forks a session whose requests carry the whole history again', async () => {
    const h = await longSession();
    h.file('a.txt', 'alpha\n');
    const id = await h.open();
    for (let turn = 0; turn < 4; turn++) {
      h.llm.queue(reply().tool('read_file', { path: 'a.txt' }), reply().text(`done ${turn}`));
      await h.prompt(id, `turn ${turn}`);
    }
    await h.client.request('session/compact', { sessionId: id });
    const fork = await h.client.request('session/open', { resume: id, atTurn: 4 });
    expect(fork.sessionId).not.toBe(id);
    expect(fork.warnings[0]).toBe(`forked from ${id} at turn 4`);
    h.llm.queue(reply().text('whole again'));
    expect((await h.prompt(fork.sessionId, 'next')).outcome).toBe('answered');
    const body = JSON.stringify(h.llm.requests.at(-1)!.body);
    expect(body).not.toContain('Summary of the conversation so far');
    expect(body).toContain('"turn 0"');
    // The compacted session goes on compacted.
    h.llm.queue(reply().text('still compacted'));
    await h.prompt(id, 'next');
    expect(JSON.stringify(h.llm.requests.at(-1)!.body)).toContain(
      'Summary of the conversation so far',
    );
    await expect(h.client.request('session/open', { resume: id, atTurn: 9 })).rejects.toThrow(
      `session ${id} has no turn 9; its turns are 1, 2, 3, 4, 5`,
    );
  });
});
