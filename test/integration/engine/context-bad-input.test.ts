import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startInProcess } from '../../../src/main/daemon/in-process.ts';
import { readTranscript } from '../../../src/main/engine/transcript.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { testEnv } from '../../fixtures/env.ts';
import { httpError, reply, type ReplyInput } from '../../fixtures/fake-llm/reply.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { startHarness, type Harness } from './harness.ts';

// Bad input around the context window: each gets a clear message, the session goes on, and the
// transcript loses nothing.

const WINDOW = 6000;

const isSummary = (request: RecordedRequest): boolean =>
  JSON.stringify(request.body.messages?.[0] ?? '').includes('You summarize a working session');

/** Models besides `fake` (same server): `roomy` with a 16k window, `down` on a closed port. */
const models = (window: number, llmUrl: string) =>
  `    toolProtocol: native\n    contextWindow: ${window}\n    maxTokens: 500\n` +
  `  roomy:\n    provider: openai\n    baseUrl: ${llmUrl}/v1\n    model: roomy-model\n    toolProtocol: native\n    contextWindow: 16000\n` +
  `  down:\n    provider: openai\n    baseUrl: http://127.0.0.1:9/v1\n    model: down-model\n    toolProtocol: native\n`;

const start = (
  summary: (request: RecordedRequest) => ReplyInput,
  extra: { window?: number; config?: string; fakeWindow?: number } = {},
): Promise<Harness> =>
  startHarness('in-process', {
    mcp: '  {}\n',
    model: (url) => models(extra.window ?? WINDOW, url),
    config: `agent:\n  git: false\n${extra.config ?? ''}`,
    llm: {
      contextWindow: extra.fakeWindow ?? extra.window ?? WINDOW,
      route: (request) => (isSummary(request) ? summary(request) : undefined),
    },
  });

/** Turns large enough that the 6k window needs a summary every few turns. */
const talk = async (h: Harness, id: string, turns: number, extra = {}) => {
  const outcomes: string[] = [];
  for (let t = 0; t < turns; t++) {
    h.llm.queue(reply().text(`answer ${t}: ${'the answer goes on. '.repeat(40)}`));
    const summary = await h.prompt(
      id,
      `question ${t}: ${'please look at this. '.repeat(60)}`,
      extra,
    );
    outcomes.push(
      summary.outcome === 'answered' ? 'answered' : `${summary.outcome}: ${summary.error}`,
    );
  }
  return outcomes;
};

const notices = (h: Harness) =>
  h.events.flatMap((e) => (e.type === 'notice' ? [e.text] : [])).join('\n');

const transcriptOf = (h: Harness, id: string) =>
  readTranscript(nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir, id);

describe('a summary that fails never fails the turn', () => {
  it('the summary model answers with nothing: niffler outlines the turns, every turn is answered', async () => {
    const h = await start(() => reply().text(''));
    const id = await h.open();
    expect(await talk(h, id, 8)).toEqual(Array(8).fill('answered'));
    expect(h.llm.requests.some(isSummary)).toBe(true);
    expect(notices(h)).toMatch(
      /outlined by niffler instead of summarized .*the summary model answered with nothing/,
    );
    expect(Math.max(...h.llm.requests.map((r) => r.tokens ?? 0))).toBeLessThanOrEqual(WINDOW);
    expect(transcriptOf(h, id).messages.filter((m) => m.role === 'user')).toHaveLength(8);
  });

  it('the summary model answers with an error: the same, and the error is named', async () => {
    const h = await start(() => httpError(400, 'summaries are not allowed here'));
    const id = await h.open();
    expect(await talk(h, id, 8)).toEqual(Array(8).fill('answered'));
    expect(notices(h)).toMatch(/the summary model failed: .*summaries are not allowed here/);
  });

  it('the summary model answers with more text than it replaces: cut to its bound', async () => {
    const h = await start(() => reply().text('word '.repeat(20_000)));
    const id = await h.open();
    expect(await talk(h, id, 8)).toEqual(Array(8).fill('answered'));
    const marker = transcriptOf(h, id).entries.find(
      (e) => e.type === 'compaction' && e.marker.summary,
    );
    expect(marker && marker.type === 'compaction' && marker.marker.summary).toContain(
      '[cut to fit the context window]',
    );
    expect(Math.max(...h.llm.requests.map((r) => r.tokens ?? 0))).toBeLessThanOrEqual(WINDOW);
  });

  it('the summary model (agent.compaction.model) is down: outlined, answered, said', async () => {
    const h = await start(() => reply().text('never asked'), {
      config: '  compaction:\n    model: down\n',
    });
    const id = await h.open();
    expect(await talk(h, id, 6)).toEqual(Array(6).fill('answered'));
    expect(h.llm.requests.some(isSummary)).toBe(false);
    expect(notices(h)).toMatch(/outlined by niffler .*the summary model failed: /);
  }, 120_000);

  it("without agent.compaction.model the turn's own model writes the summary, not config.model", async () => {
    const h = await start(() => reply().text('Goals: x.'), { window: 16_000 });
    const id = await h.open();
    // The session runs on `roomy` (-m / /model); config.model is `fake`.
    for (let t = 0; t < 6; t++) {
      h.llm.queue(reply().text(`answer ${t}: ${'the answer goes on. '.repeat(150)}`));
      await h.prompt(id, `question ${t}: ${'please look at this. '.repeat(300)}`, {
        model: 'roomy',
      });
    }
    const summaries = h.llm.requests.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.map((r) => String(r.body.model))).toEqual(summaries.map(() => 'roomy-model'));
  });
});

describe('bad input around the window', () => {
  it('a model whose window is smaller than the system prompt and tools: a clear error, and the session goes on with another', async () => {
    const h = await start(() => reply().text('Goals: x.'), { window: 1500, fakeWindow: 16_000 });
    const id = await h.open();
    const failed = await h.prompt(id, 'hello there');
    expect(failed.outcome).toBe('error');
    expect(failed.error).toMatch(
      /the system prompt and tool definitions alone \(about [\d,]+ \+ [\d,]+ tokens\) leave no room in the 1,500-token window of fake/,
    );
    expect(failed.error).toContain('tools.search: always');
    expect(h.llm.requests).toHaveLength(0);
    h.llm.queue(reply().text('hello from a roomier model'));
    const next = await h.prompt(id, 'and now?', { model: 'roomy' });
    expect(next).toMatchObject({ outcome: 'answered', text: 'hello from a roomier model' });
    // Nothing was lost: the first message is in the transcript and went with the next request.
    expect(JSON.stringify(h.llm.requests.at(-1)!.body.messages)).toContain('hello there');
  });

  it('/compact while a turn runs: a clear error, and the turn goes on to its answer', async () => {
    const h = await start(() => reply().text('Goals: x.'));
    h.file('a.txt', 'alpha\n');
    const id = await h.open();
    let approve: (answer: 'once') => void = () => {};
    h.answer = () => new Promise((resolve) => (approve = resolve));
    h.llm.queue(
      reply().tool('write_file', { path: 'b.txt', content: 'beta\n' }),
      reply().text('written'),
    );
    const turn = h.prompt(id, 'write b.txt');
    await expect.poll(() => h.approvals.length, { timeout: 60_000 }).toBe(1);
    await expect(h.client.request('session/compact', { sessionId: id })).rejects.toThrow(
      `session ${id} is running a turn; compact it after`,
    );
    approve('once');
    expect(await turn).toMatchObject({ outcome: 'answered', text: 'written' });
    expect((await h.client.request('session/compact', { sessionId: id })).notes).toEqual([
      'nothing to compact yet: the conversation is too short',
    ]);
    expect(transcriptOf(h, id).messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('a compaction names outputs whose files were deleted: resuming says so and writes them again from the transcript', async () => {
    const h = await start(() => reply().text('Goals: read the notes.'));
    for (let i = 0; i < 5; i++)
      h.file(`notes-${i}.txt`, `notes ${i}: ${'lorem ipsum '.repeat(600)}\n`);
    const id = await h.open();
    for (let t = 0; t < 5; t++) {
      h.llm.queue(reply().tool('read_file', { path: `notes-${t}.txt` }), reply().text(`read ${t}`));
      expect((await h.prompt(id, `read notes ${t}`)).outcome).toBe('answered');
    }
    const outputs = nifflerPaths(h.root, { NIFFLER_HOME: h.home }).outputsDir;
    const saved = readdirSync(outputs).filter((f) => f.startsWith(id));
    expect(saved.length).toBeGreaterThan(0);
    for (const file of saved) rmSync(path.join(outputs, file));
    const before = transcriptOf(h, id).messages;

    // A new daemon has only the transcript.
    const again = await startInProcess({
      root: h.root,
      env: testEnv({ HOME: path.dirname(h.root), NIFFLER_HOME: h.home }),
    });
    onTestFinished(again.close);
    const opened = await again.client.request('session/open', { resume: id });
    expect(opened.warnings.join('\n')).toContain(
      `${saved.length} cleared tool output(s) of this session had lost their files (saved outputs are pruned after tools.output.maxAgeDays): ${saved.length} written again from the transcript`,
    );
    for (const file of saved) expect(existsSync(path.join(outputs, file))).toBe(true);
    h.llm.queue(reply().text('still here'));
    const next = await again.client.request('session/prompt', {
      sessionId: id,
      text: 'go on',
      interactive: false,
    });
    expect(next).toMatchObject({ outcome: 'answered', text: 'still here' });
    expect(transcriptOf(h, id).messages.slice(0, before.length)).toEqual(before);
  });

  it('a server that numbers its calls per reply (call_1 every time): ids are made unique, and clearing an old output leaves the newest whole', async () => {
    const h = await start(() => reply().text('Goals: read the notes.'));
    for (let i = 0; i < 4; i++)
      h.file(`notes-${i}.txt`, `notes ${i}: ${'lorem ipsum '.repeat(600)}\n`);
    const id = await h.open();
    for (let t = 0; t < 4; t++) {
      h.llm.queue(reply().tool('read_file', { path: `notes-${t}.txt` }), reply().text(`read ${t}`));
      expect((await h.prompt(id, `read notes ${t}`)).outcome).toBe('answered');
    }
    const ids = transcriptOf(h, id).messages.flatMap((m) =>
      m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [],
    );
    expect(ids).toEqual(['call_1', 'call_1_2', 'call_1_3', 'call_1_4']);
    expect(
      transcriptOf(h, id).entries.some((e) => e.type === 'compaction' && e.marker.cleared.length),
    ).toBe(true);
    // The last request (the answer of turn 4) carries notes-3 whole.
    const last = h.llm.requests.filter((r) => !isSummary(r)).at(-1)!;
    expect(JSON.stringify(last.body.messages)).toContain('notes 3: lorem ipsum');
  });
});
