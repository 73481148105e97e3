import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startInProcess } from '../../../src/main/daemon/in-process.ts';
import { readTranscript } from '../../../src/main/engine/transcript.ts';
import type { SessionOpened } from '../../../src/main/protocol.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { testEnv } from '../../fixtures/env.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { waitForLines } from '../../unit/tools/repo.ts';
import { carriers, startHarness, toolMessages } from './harness.ts';

describe.each(carriers)('agent loop over the %s carrier', (carrier) => {
  it('runs a 3-step turn: built-in read, MCP call, answer; the transcript has every message', async () => {
    // A window roomy enough that the MCP server's tools are sent whole, not behind tool_search.
    const h = await startHarness(carrier, {
      model: '    toolProtocol: native\n    contextWindow: 128000\n',
    });
    h.file('notes.txt', 'the secret word is walrus\n');
    h.llm.queue(
      reply().tool('read_file', { path: 'notes.txt' }).usage(10, 5),
      reply().tool('everything__echo', { message: 'walrus' }).usage(20, 5),
      reply().text('The word is walrus.').usage(30, 7),
    );
    const id = await h.open();
    const summary = await h.prompt(id, 'what is the secret word?');
    expect(summary).toMatchObject({
      outcome: 'answered',
      text: 'The word is walrus.',
      steps: 3,
      denied: [],
      usage: { inputTokens: 60, outputTokens: 17 },
    });
    expect(summary.costUsd).toBeCloseTo((60 * 1 + 17 * 2) / 1e6);

    const [first, second, third] = h.llm.requests;
    expect(first!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(
      expect.arrayContaining(['read_file', 'bash', 'everything__echo']),
    );
    expect(JSON.stringify(toolMessages(second!.body))).toContain('walrus');
    expect(JSON.stringify(toolMessages(third!.body).at(-1))).toContain('Echo: walrus');
    // echo is annotated readOnlyHint, so it runs without asking.
    expect(h.approvals).toEqual([]);

    const transcript = readTranscript(
      nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir,
      id,
    );
    expect(transcript.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(transcript.entries.at(-1)).toMatchObject({
      type: 'turn-end',
      outcome: 'answered',
      steps: 3,
    });
  });

  it('runs read-only calls of one reply together and keeps their order', async () => {
    const h = await startHarness(carrier);
    h.file('a.txt', 'alpha\n');
    h.file('b.txt', 'beta\n');
    h.llm.queue(
      reply()
        .tool('read_file', { path: 'a.txt' }, { id: 'call_a' })
        .tool('read_file', { path: 'b.txt' }, { id: 'call_b' }),
      reply().text('done'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'read both')).outcome).toBe('answered');
    const tools = toolMessages(h.llm.requests[1]!.body);
    expect(tools.map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b']);
    expect(String(tools[0]!.content)).toContain('alpha');
    expect(String(tools[1]!.content)).toContain('beta');
    expect(h.approvals).toEqual([]);
  });

  it('forwards the progress of a long MCP call to the front-end', async () => {
    const h = await startHarness(carrier);
    h.llm.queue(
      reply().tool('everything__trigger-long-running-operation', { duration: 0.3, steps: 3 }),
      reply().text('done'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'run the long operation')).outcome).toBe('answered');
    const progress = h.events.filter((e) => e.type === 'tool-progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toMatchObject({ type: 'tool-progress', progress: 1, total: 3 });
  });

  it('ask → deny → the model is told and nothing is written', async () => {
    const h = await startHarness(carrier);
    h.answer = () => 'deny';
    h.llm.queue(
      reply().tool('write_file', { path: 'out.txt', content: 'x' }),
      reply().text('I could not write it.'),
    );
    const id = await h.open();
    const summary = await h.prompt(id, 'write out.txt');
    expect(summary).toMatchObject({ outcome: 'answered', denied: ['write_file'] });
    expect(existsSync(path.join(h.root, 'out.txt'))).toBe(false);
    expect(JSON.stringify(toolMessages(h.llm.requests[1]!.body))).toContain('the user denied it');
    expect(h.events.some((e) => e.type === 'tool-denied' && e.name === 'write_file')).toBe(true);
  });

  it('one-shot without --yes denies what needs approval; --yes runs it', async () => {
    const h = await startHarness(carrier);
    h.llm.queue(
      reply().tool('write_file', { path: 'out.txt', content: 'x' }),
      reply().text('denied'),
    );
    const id = await h.open();
    const denied = await h.prompt(id, 'write', { interactive: false });
    expect(denied.denied).toEqual(['write_file']);
    expect(JSON.stringify(toolMessages(h.llm.requests[1]!.body))).toContain('run with --yes');
    h.llm.queue(
      reply().tool('write_file', { path: 'out.txt', content: 'x' }),
      reply().text('written'),
    );
    expect((await h.prompt(id, 'write', { interactive: false, yes: true })).denied).toEqual([]);
    expect(readFileSync(path.join(h.root, 'out.txt'), 'utf8')).toBe('x');
  });

  it('malformed tool-call arguments become an error the model reads, then it corrects itself', async () => {
    const h = await startHarness(carrier);
    h.file('a.txt', 'alpha\n');
    h.llm.queue(
      reply().tool('read_file', '{"path": "a.txt"', { id: 'bad' }),
      reply().tool('read_file', { path: 'a.txt' }),
      reply().text('ok'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'read')).outcome).toBe('answered');
    const tools = toolMessages(h.llm.requests[1]!.body);
    expect(tools[0]!.tool_call_id).toBe('bad');
    expect(String(tools[0]!.content)).toContain('could not be read');
    expect(String(toolMessages(h.llm.requests[2]!.body).at(-1)!.content)).toContain('alpha');
  });

  it('an MCP server that crashes mid-turn gives the model the error; the turn still ends with an answer', async () => {
    const tsx = import.meta.resolve('tsx');
    const crash = path.resolve('test/fixtures/mcp/crash.ts');
    const h = await startHarness(carrier, {
      mcp: `  crashy:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--import", ${JSON.stringify(tsx)}, ${JSON.stringify(crash)}]\n    trust: true\n`,
    });
    h.llm.queue(
      reply().tool('crashy__crash', { code: 1 }),
      reply().text('The server crashed; I will do without it.'),
    );
    const id = await h.open();
    const summary = await h.prompt(id, 'use the crashy tool');
    expect(summary).toMatchObject({
      outcome: 'answered',
      text: 'The server crashed; I will do without it.',
    });
    const result = String(toolMessages(h.llm.requests[1]!.body)[0]!.content);
    expect(result).toMatch(/crashy.*exited|exited.*crashy/);
  });

  it('stops at agent.maxSteps and says so', async () => {
    const h = await startHarness(carrier, { config: 'agent:\n  maxSteps: 2\n' });
    h.file('a.txt', 'alpha\n');
    h.llm.queue(
      reply().tool('read_file', { path: 'a.txt' }),
      reply().tool('read_file', { path: 'a.txt' }),
      reply().tool('read_file', { path: 'a.txt' }),
    );
    const id = await h.open();
    const summary = await h.prompt(id, 'loop');
    expect(summary).toMatchObject({ outcome: 'max-steps', steps: 2 });
    expect(h.llm.requests).toHaveLength(2);
    expect(h.events.some((e) => e.type === 'notice' && e.text.includes('agent.maxSteps'))).toBe(
      true,
    );
  });

  it('cancel mid-stream ends the turn as cancelled and aborts the HTTP stream', async () => {
    const h = await startHarness(carrier);
    h.llm.queue(reply().text('thinking about it').hang());
    const id = await h.open();
    const controller = new AbortController();
    const running = h.prompt(id, 'go', {}, controller.signal).catch((error: unknown) => error);
    await h.llm.waitForRequests(1);
    controller.abort();
    await running;
    expect(await h.llm.requests[0]!.closed).toEqual({ aborted: true });
    const list = await h.client.request('session/list', {});
    expect(list[0]).toMatchObject({ id });
    const transcript = readTranscript(
      nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir,
      id,
    );
    expect(transcript.entries.at(-1)).toMatchObject({ type: 'turn-end', outcome: 'cancelled' });
  });

  it('cancel mid-tool ends the turn as cancelled and records the cancelled call', async () => {
    const h = await startHarness(carrier, { config: 'tools:\n  policy:\n    bash: allow\n' });
    const pidFile = path.join(h.root, 'pid');
    h.llm.queue(reply().tool('bash', { command: `sleep 60 & echo $! > ${pidFile}; wait` }));
    const id = await h.open();
    const controller = new AbortController();
    const running = h.prompt(id, 'sleep', {}, controller.signal).catch((error: unknown) => error);
    await waitForLines(pidFile, 1);
    controller.abort();
    await running;
    const transcript = readTranscript(
      nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir,
      id,
    );
    const last = transcript.entries.at(-1);
    expect(last).toMatchObject({ type: 'turn-end', outcome: 'cancelled' });
    const toolResult = transcript.messages.find((m) => m.role === 'tool');
    expect(toolResult).toMatchObject({
      role: 'tool',
      result: { ok: false, error: { code: 'canceled' } },
    });
  });

  it('tells what a session has spent, read back from its transcript by a new engine too', async () => {
    const h = await startHarness(carrier);
    h.llm.queue(reply().text('first').usage(100, 40), reply().text('second').usage(50, 10));
    const id = await h.open();
    await h.prompt(id, 'one');
    await h.prompt(id, 'two');
    // A turn that fails before it starts (an unknown model) still ends, and counts.
    expect(await h.prompt(id, 'three', { model: 'missing' })).toMatchObject({ outcome: 'error' });
    // Prices in the harness config: 1 and 2 per million tokens in and out.
    const spent = { turns: 3, usage: { inputTokens: 150, outputTokens: 50 } };
    const check = (opened: SessionOpened, extraTokens = 0) => {
      expect(opened.spent).toMatchObject({
        ...spent,
        usage: { inputTokens: 150 + extraTokens, outputTokens: 50 + extraTokens },
      });
      expect(opened.spent?.costUsd).toBeCloseTo((150 + 50 * 2) / 1e6, 12);
    };
    check(await h.client.request('session/open', { resume: id }));

    // A restarted daemon has only the transcript, here with a fourth turn cut short by a kill:
    // not a turn that ended, but its finished step's tokens were spent.
    const file = path.join(
      nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir,
      `${id}.jsonl`,
    );
    const time = new Date().toISOString();
    appendFileSync(
      file,
      [
        { type: 'turn-start', time, turn: 4, model: 'fake' },
        {
          type: 'message',
          time,
          turn: 4,
          message: { role: 'assistant', content: 'partial' },
          model: 'fake',
          usage: { inputTokens: 7, outputTokens: 7 },
        },
      ]
        .map((entry) => JSON.stringify(entry) + '\n')
        .join(''),
    );
    const again = await startInProcess({
      root: h.root,
      env: testEnv({ HOME: path.dirname(h.root), NIFFLER_HOME: h.home }),
    });
    onTestFinished(again.close);
    check(await again.client.request('session/open', { resume: id }), 7);
  });

  it('resumes a session: the history goes to the model again', async () => {
    const h = await startHarness(carrier);
    h.llm.queue(reply().text('first answer'), reply().text('second answer'));
    const id = await h.open();
    await h.prompt(id, 'first question');
    const again = await h.open({ continue: true });
    expect(again).toBe(id);
    await h.prompt(again, 'second question');
    const roles = h.llm.requests[1]!.body.messages.map((m: { role: string }) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'user']);
  });
});
