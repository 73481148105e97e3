import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { McpToolInfo } from '../../../src/workers/protocol/mcp.ts';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { RICH_SCHEMA } from '../../fixtures/mcp/rich-schema.ts';
import { ready, startHost, type TestHost } from './helpers.ts';

describe('catalog and client capabilities', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startHost([
      fixtureSpec('list-changed'),
      fixtureSpec('sampling'),
      fixtureSpec('elicitation'),
      fixtureSpec('pages'),
      fixtureSpec('names', { name: 'very.long-server name', displayName: 'names' }),
      fixtureSpec('echo'),
    ]);
    await Promise.all(
      ['list-changed', 'sampling', 'elicitation', 'pages', 'very.long-server name', 'echo'].map(
        (s) => ready(t.host, s),
      ),
    );
  });
  afterAll(() => t.host.close());

  const toolsOf = async (server: string) =>
    (await t.host.listTools()).filter((tool) => tool.server === server);

  it('refreshes the catalog on list_changed, coalescing a burst into one event', async () => {
    const events: McpToolInfo[][] = [];
    const changed = new Promise<void>((resolve) =>
      t.host.on((e) => {
        if (e.type !== 'tools-changed' || e.server !== 'list-changed') return;
        events.push(e.tools);
        if (e.tools.some((tool) => tool.tool === 'gamma')) resolve();
      }),
    );
    const listings = async () => {
      const result = await t.host.callTool('list-changed__listings', {});
      return result.ok ? Number(result.output) : NaN;
    };
    const before = await listings();
    // Three registrations send three notifications, which the client reads at once.
    await t.host.callTool('list-changed__add_tools', { names: ['alpha', 'beta', 'gamma'] });
    await changed;
    expect(events).toHaveLength(1);
    // The server saw one tools/list for them: any other would have reached it before this call.
    expect(await listings()).toBe(before + 1);
    expect(await t.host.callTool('list-changed__beta', {})).toMatchObject({
      ok: true,
      output: 'I am beta',
    });
    const removed = new Promise<void>((resolve) =>
      t.host.on(
        (e) =>
          e.type === 'tools-changed' &&
          e.server === 'list-changed' &&
          !e.tools.some((x) => x.tool === 'beta') &&
          resolve(),
      ),
    );
    await t.host.callTool('list-changed__remove_tool', { name: 'beta' });
    await removed;
    expect((await toolsOf('list-changed')).map((x) => x.tool).sort()).toEqual([
      'add_tools',
      'alpha',
      'gamma',
      'listings',
      'remove_tool',
    ]);
  });

  it("announces a server's tools before it reports the server ready", async () => {
    const own = await startHost([fixtureSpec('echo', { autoStart: false })]);
    onTestFinished(() => own.host.close());
    const seen: string[] = [];
    own.host.on((e) => {
      if (e.type === 'tools-changed' && e.server === 'echo') seen.push(`tools ${e.tools.length}`);
      if (e.type === 'status' && e.status.name === 'echo') seen.push(e.status.state);
    });
    await own.host.startServer('echo');
    await ready(own.host, 'echo');
    expect(seen.filter((s) => s !== 'starting')).toEqual([
      expect.stringMatching(/^tools [1-9]/),
      'ready',
    ]);
  });

  it('reads every page of tools/list, and checks output schemas from any page', async () => {
    const tools = await toolsOf('pages');
    expect(tools).toHaveLength(250);
    expect(tools.at(-1)?.name).toBe('pages__tool_249');
    expect(await t.host.callTool('pages__tool_000', {})).toMatchObject({
      ok: true,
      structured: { n: 1 },
    });
    const bad = await t.host.callTool('pages__tool_249', {});
    expect(bad).toMatchObject({ ok: false, error: { code: 'tool-error' } });
    expect(!bad.ok && bad.error.message).toContain('does not match its output schema');
  });

  it('gives every tool a valid, stable, unique model-facing name', async () => {
    const tools = await toolsOf('very.long-server name');
    const names = tools.map((tool) => tool.name);
    expect(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true);
    expect(new Set(names).size).toBe(6);
    expect(names).toContain('very_long-server_name__search');
    expect(names).toContain('very_long-server_name__with_space');
    const byTool = Object.fromEntries(tools.map((tool) => [tool.tool, tool.name]));
    expect(byTool['get.item']).toMatch(/^very_long-server_name__get_item_[0-9a-f]{8}$/);
    expect(byTool['get_item']).toMatch(/^very_long-server_name__get_item_[0-9a-f]{8}$/);
    expect(byTool['get.item']).not.toBe(byTool['get_item']);
    expect(await t.host.callTool(byTool['get.item']!, {})).toMatchObject({
      output: 'called get.item with {}',
    });
    expect(await t.host.callTool(byTool['x'.repeat(80)]!, {})).toMatchObject({
      output: `called ${'x'.repeat(80)} with {}`,
    });
  });

  it('passes input schemas through whole: required, enums, nesting, $defs and $ref', async () => {
    const search = (await toolsOf('very.long-server name')).find((tool) => tool.tool === 'search');
    expect(search?.inputSchema).toEqual(RICH_SCHEMA);
  });

  it('routes sampling to the engine, and declines with a reason when nobody answers', async () => {
    const declined = await t.host.callTool('sampling__ask_llm', { question: 'hi?' });
    expect(declined).toMatchObject({ ok: false });
    expect(declined.output).toContain(
      'sampling declined: sampling is not available: no user interface is attached',
    );
    const asked: unknown[] = [];
    t.host.setSamplingHandler((request) => {
      asked.push(request);
      return Promise.resolve({
        ok: true,
        model: 'fake-model',
        role: 'assistant',
        content: { type: 'text', text: 'forty-two' },
      });
    });
    expect(await t.host.callTool('sampling__ask_llm', { question: 'meaning?' })).toMatchObject({
      ok: true,
      output: 'fake-model: forty-two',
    });
    expect(asked).toEqual([
      {
        server: 'sampling',
        params: expect.objectContaining({
          maxTokens: 100,
          messages: [{ role: 'user', content: { type: 'text', text: 'meaning?' } }],
        }),
      },
    ]);
    t.host.setSamplingHandler(undefined);
  });

  it('routes elicitation to the engine with schema defaults applied, and declines without a UI', async () => {
    const declined = await t.host.callTool('elicitation__ask_user', {});
    expect(JSON.parse(declined.output!)).toEqual({
      action: 'decline',
      _meta: { reason: 'elicitation declined: no user interface is attached to answer it' },
    });
    t.host.setElicitationHandler(({ elicitation }) => {
      expect(elicitation.message).toBe('Who are you?');
      return Promise.resolve({ action: 'accept', content: { name: 'Ann' } });
    });
    const accepted = await t.host.callTool('elicitation__ask_user', {});
    expect(JSON.parse(accepted.output!)).toEqual({
      action: 'accept',
      content: { name: 'Ann', color: 'green', age: 42 },
    });
    t.host.setElicitationHandler(undefined);
  });

  it.each(['elicitation', 'modern'] as const)(
    "gives a call's slot back while it waits for an answer (%s): the server's other calls go on",
    async (fixture) => {
      const own = await startHost([fixtureSpec(fixture, { maxConcurrency: 1 })]);
      onTestFinished(() => own.host.close());
      await ready(own.host, fixture);
      const tool = fixture === 'modern' ? 'modern__confirm' : 'elicitation__ask_user';
      const answers: (() => void)[] = [];
      // Both calls reach the server although it takes one at a time: the first one waits.
      const bothAsked = new Promise<void>((resolve) =>
        own.host.setElicitationHandler(
          () =>
            new Promise((answer) => {
              answers.push(() => answer({ action: 'accept', content: { name: 'Ann', ok: true } }));
              if (answers.length === 2) resolve();
            }),
        ),
      );
      const calls = [own.host.callTool(tool, {}), own.host.callTool(tool, {})];
      await bothAsked;
      const [status] = await own.host.status();
      expect(status).toMatchObject({ inFlight: 0, queued: 0 });
      for (const answer of answers) answer();
      for (const result of await Promise.all(calls)) expect(result.ok).toBe(true);
      const [after] = await own.host.status();
      expect(after).toMatchObject({ inFlight: 0, queued: 0 });
    },
  );

  it("puts a 2026-07-28 server's question to the call that got it, with two callers' calls in flight", async () => {
    const own = await startHost([fixtureSpec('modern')]);
    onTestFinished(() => own.host.close());
    await ready(own.host, 'modern');
    const asked: string[] = [];
    let bothAsked: () => void = () => {};
    const both = new Promise<void>((resolve) => (bothAsked = resolve));
    // Each caller answers once both were asked: until then both calls are in flight.
    const caller = (who: string) => ({
      onElicit: async () => {
        asked.push(who);
        if (asked.length === 2) bothAsked();
        await both;
        return { action: 'accept' as const, content: { ok: true } };
      },
    });
    const results = await Promise.all([
      own.host.callTool('modern__confirm', {}, caller('A')),
      own.host.callTool('modern__confirm', {}, caller('B')),
    ]);
    expect(results.map((r) => r.output)).toEqual(['confirmed', 'confirmed']);
    expect(asked.sort()).toEqual(['A', 'B']);
  });

  it("declines a 2025 server's question that could be either of two callers' (the request names no call)", async () => {
    const own = await startHost([fixtureSpec('elicitation')]);
    onTestFinished(() => own.host.close());
    await ready(own.host, 'elicitation');
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstAsked: () => void = () => {};
    const asked = new Promise<void>((resolve) => (firstAsked = resolve));
    const first = own.host.callTool(
      'elicitation__ask_user',
      {},
      {
        onElicit: async () => {
          firstAsked();
          await released;
          return { action: 'accept', content: { name: 'Ann' } };
        },
      },
    );
    await asked;
    // A second caller's call while the first one's question is open: whose is the next question?
    const second = await own.host.callTool(
      'elicitation__ask_user',
      {},
      { onElicit: () => Promise.resolve({ action: 'accept', content: { name: 'Bob' } }) },
    );
    expect(JSON.parse(second.output!)).toMatchObject({
      action: 'decline',
      _meta: { reason: expect.stringContaining('cannot tell which caller') },
    });
    release();
    expect(JSON.parse((await first).output!)).toMatchObject({
      action: 'accept',
      content: { name: 'Ann' },
    });
  });
});
