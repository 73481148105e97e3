import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startInProcess } from '../../../src/main/daemon/in-process.ts';
import { readTranscript } from '../../../src/main/engine/transcript.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { testEnv } from '../../fixtures/env.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { serverBin } from '../../fixtures/mcp/servers.ts';
import { startHarness, toolMessages } from './harness.ts';
import { trustRepo } from './trust-helper.ts';

const toolNames = (request: RecordedRequest): string[] =>
  ((request.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);

const firstUser = (request: RecordedRequest): string =>
  String(request.body.messages.find((m: { role: string }) => m.role === 'user')?.content ?? '');

const memoryServer = `  memory:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-memory'))}]\n`;

describe('agent profiles', () => {
  it('plan cannot write: the model tries write_file and bash, both are denied by the profile', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    h.llm.queue(
      reply()
        .tool('write_file', { path: 'plan.txt', content: 'x' })
        .tool('bash', { command: 'touch b' }),
      reply().text('I would write plan.txt'),
    );
    const opened = await h.client.request('session/open', { agent: 'plan' });
    expect(opened.agent).toBe('plan');
    const summary = await h.prompt(opened.sessionId, 'write plan.txt', { yes: true });
    expect(summary.denied).toEqual(['write_file', 'bash']);
    expect(existsSync(path.join(h.root, 'plan.txt'))).toBe(false);
    expect(existsSync(path.join(h.root, 'b'))).toBe(false);
    const results = JSON.stringify(toolMessages(h.llm.requests[1]!.body));
    expect(results).toContain('agent plan (built-in)');
    expect(h.llm.requests[0]!.body.messages[0].content).toContain('## Agent: plan');
  });

  it('a repository agent with tools: [memory__*] sees only those tools, once the repository is trusted', async () => {
    const h = await startHarness('in-process', { mcp: memoryServer });
    h.file(
      '.niffler/agents/keeper.md',
      '---\ndescription: keeps notes\ntools: [memory__*]\nmode: primary\n---\nYou keep notes in memory.\n',
    );
    await h.client.request('config/reload', {});
    const untrusted = await h.client.request('extensions/list', {});
    expect(untrusted.agents.map((a) => a.name)).not.toContain('keeper');
    expect(untrusted.problems.join('\n')).toContain('agents.keeper');
    await trustRepo(h);
    await h.client.request('mcp/status', { wait: true });
    const listed = await h.client.request('extensions/list', {});
    expect(listed.agents.find((a) => a.name === 'keeper')).toMatchObject({ source: 'repo' });
    h.llm.queue(reply().text('noted'));
    const opened = await h.client.request('session/open', { agent: 'keeper' });
    expect((await h.prompt(opened.sessionId, 'remember this')).outcome).toBe('answered');
    const names = toolNames(h.llm.requests.at(-1)!);
    expect(names.length).toBeGreaterThan(3);
    expect(names.every((n) => n.startsWith('memory__'))).toBe(true);
    expect(h.llm.requests.at(-1)!.body.messages[0].content).toContain('You keep notes in memory.');
  });

  it('.claude/agents and .opencode/agent files work unchanged once trusted; a model not configured here gives way to the session one', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    h.file(
      '.claude/agents/code-reviewer.md',
      '---\nname: code-reviewer\ndescription: Reviews code after changes\ntools: Read, Grep, Glob\nmodel: sonnet\ncolor: cyan\n---\nYou are a senior code reviewer.\n',
    );
    h.file(
      '.opencode/agent/docs.md',
      '---\ndescription: Writes docs\nmode: primary\nmodel: anthropic/claude-sonnet-4-20250514\ntools:\n  bash: false\npermission:\n  edit: deny\n---\nWrite clear docs.\n',
    );
    await h.client.request('config/reload', {});
    const untrusted = await h.client.request('extensions/list', {});
    expect(untrusted.agents.map((a) => a.name)).toEqual(['build', 'plan', 'review']);
    await trustRepo(h);
    const listed = await h.client.request('extensions/list', {});
    expect(listed.agents.map((a) => [a.name, a.mode, a.source])).toEqual([
      ['build', 'all', 'builtin'],
      ['plan', 'primary', 'builtin'],
      ['review', 'all', 'builtin'],
      ['code-reviewer', 'subagent', 'repo'],
      ['docs', 'primary', 'repo'],
    ]);

    h.llm.queue(
      reply().text('looks fine'),
      reply().tool('write_file', { path: 'd.md', content: 'x' }),
      reply().text('denied'),
    );
    const reviewer = await h.client.request('session/open', { agent: 'code-reviewer' });
    expect((await h.prompt(reviewer.sessionId, 'review it')).outcome).toBe('answered');
    expect(toolNames(h.llm.requests.at(-1)!).sort()).toEqual(['glob', 'grep', 'read_file']);
    expect(h.llm.requests.at(-1)!.body.messages[0].content).toContain(
      'You are a senior code reviewer.',
    );
    expect(h.events).toContainEqual(
      expect.objectContaining({
        type: 'notice',
        text: 'agent code-reviewer asks for model "sonnet", which is not configured (models: in your config); using fake',
      }),
    );

    const docs = await h.client.request('session/open', { agent: 'docs' });
    const summary = await h.prompt(docs.sessionId, 'write the docs', { yes: true });
    expect(toolNames(h.llm.requests.at(-2)!)).not.toContain('bash');
    expect(summary.denied).toEqual(['write_file']);
    expect(existsSync(path.join(h.root, 'd.md'))).toBe(false);
  });

  it('a profile file with bad frontmatter is skipped with file:line, the others load', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    const agents = path.join(h.home, 'agents');
    mkdirSync(agents);
    writeFileSync(path.join(agents, 'good.md'), '---\ndescription: fine\n---\nHi\n');
    writeFileSync(path.join(agents, 'bad.md'), '---\ndescription: x\nmaxSteps: lots\n---\n');
    await h.client.request('config/reload', {});
    const listed = await h.client.request('extensions/list', {});
    expect(listed.agents.map((a) => a.name)).toContain('good');
    expect(listed.problems.join('\n')).toMatch(/bad\.md:3 maxSteps: expected a number, got "lots"/);
  });
});

describe('per-session tool toggles', () => {
  it('are recorded in the transcript and survive /resume (in a new engine) and /clear', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    const id = await h.open();
    expect(
      await h.client.request('session/toggle', { sessionId: id, name: 'bash', enabled: false }),
    ).toEqual({ disabled: ['bash'] });
    const env = testEnv({ HOME: path.dirname(h.root), NIFFLER_HOME: h.home });
    const { entries } = readTranscript(nifflerPaths(h.root, env).sessionsDir, id);
    expect(entries.find((e) => e.type === 'tools')).toMatchObject({ disabled: ['bash'] });

    const other = await startInProcess({ root: h.root, env });
    onTestFinished(() => other.close());
    const resumed = await other.client.request('session/open', { resume: id });
    expect(resumed.disabled).toEqual(['bash']);
    h.llm.queue(reply().text('ok'));
    await other.client.request('session/prompt', { sessionId: id, text: 'hi', interactive: false });
    expect(toolNames(h.llm.requests.at(-1)!)).not.toContain('bash');
    expect(toolNames(h.llm.requests.at(-1)!)).toContain('read_file');

    const cleared = await other.client.request('session/open', { disabled: resumed.disabled });
    expect(cleared.disabled).toEqual(['bash']);
  });
});

describe('the task tool', () => {
  it('hands a job to a subagent with its own transcript; the parent records the child', async () => {
    const h = await startHarness('in-process', {
      mcp: '  {}\n',
      llm: {
        route: (request) =>
          firstUser(request) === 'count the files'
            ? request.body.messages.some((m: { role: string }) => m.role === 'tool')
              ? reply().text('there are 2 files')
              : reply().tool('list_dir', {})
            : undefined,
      },
    });
    h.file('a.txt', 'a');
    h.llm.queue(
      reply().tool('task', { description: 'count', prompt: 'count the files', agent: 'review' }),
      reply().text('the subagent says 2'),
    );
    const id = await h.open();
    const summary = await h.prompt(id, 'how many files?');
    expect(summary).toMatchObject({ outcome: 'answered', text: 'the subagent says 2' });
    const parentResult = toolMessages(h.llm.requests.at(-1)!.body).at(-1)!;
    expect(String(parentResult.content)).toContain('there are 2 files');
    const dir = nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir;
    const child = readTranscript(dir, id).entries.find((e) => e.type === 'child');
    expect(child).toMatchObject({ agent: 'review' });
    const childTranscript = readTranscript(dir, (child as { id: string }).id);
    expect(childTranscript.entries[0]).toMatchObject({ type: 'session', parent: { id } });
    expect(childTranscript.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(
      h.events.some((e) => e.type === 'tool-progress' && e.message === 'review: list_dir'),
    ).toBe(true);
  });

  it("a subagent runs on the session's model (-m, /model) unless its profile names one", async () => {
    const h = await startHarness('in-process', {
      mcp: '  {}\n',
      model: (url) =>
        `    toolProtocol: native\n` +
        `  other:\n    provider: openai\n    baseUrl: ${url}/v1\n    model: other-model\n    toolProtocol: native\n` +
        `  third:\n    provider: openai\n    baseUrl: ${url}/v1\n    model: third-model\n    toolProtocol: native\n`,
      llm: {
        route: (request) =>
          firstUser(request).startsWith('sub:') ? reply().text('done below') : undefined,
      },
    });
    mkdirSync(path.join(h.home, 'agents'), { recursive: true });
    writeFileSync(
      path.join(h.home, 'agents', 'pinned.md'),
      '---\nname: pinned\ndescription: Runs on the third model\nmodel: third\n---\nBe brief.\n',
    );
    await h.client.request('config/reload', {});
    h.llm.queue(
      reply().tool('task', { prompt: 'sub: inherit', agent: 'review' }),
      reply().tool('task', { prompt: 'sub: pinned', agent: 'pinned' }),
      reply().text('both done'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'delegate', { model: 'other' })).outcome).toBe('answered');
    const model = (prompt: string) =>
      String(h.llm.requests.find((r) => firstUser(r) === prompt)?.body.model);
    expect(model('delegate')).toBe('other-model');
    expect(model('sub: inherit')).toBe('other-model');
    expect(model('sub: pinned')).toBe('third-model');
  });

  it('a subagent that loops is stopped by its step bound and the parent is told', async () => {
    const h = await startHarness('in-process', {
      mcp: '  {}\n',
      config: 'agent:\n  subagents:\n    maxSteps: 2\n    maxDepth: 1\n',
      llm: {
        route: (request) =>
          firstUser(request) === 'loop forever' ? reply().tool('list_dir', {}) : undefined,
      },
    });
    h.llm.queue(
      reply().tool('task', { prompt: 'loop forever' }),
      reply().text('it did not finish'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'go')).outcome).toBe('answered');
    const result = String(toolMessages(h.llm.requests.at(-1)!.body).at(-1)!.content);
    expect(result).toContain('stopped after 2 steps (its step bound)');
    // maxDepth 1: the child is not offered task again.
    const childRequests = h.llm.requests.filter((r) => firstUser(r) === 'loop forever');
    expect(childRequests).toHaveLength(2);
    expect(toolNames(childRequests[0]!)).not.toContain('task');
  });

  it('profiles that hand work to each other in a loop stop at maxDepth, and the model is told which limit', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    const agents = path.join(h.home, 'agents');
    mkdirSync(agents);
    writeFileSync(path.join(agents, 'a.md'), '---\ndescription: hands to b\n---\nAsk b.\n');
    writeFileSync(path.join(agents, 'b.md'), '---\ndescription: hands to a\n---\nAsk a.\n');
    await h.client.request('config/reload', {});
    h.llm.queue(
      reply().tool('task', { agent: 'b', prompt: 'ask a' }),
      reply().tool('task', { agent: 'a', prompt: 'ask b' }),
      reply().tool('task', { agent: 'b', prompt: 'ask a again' }),
      reply().text('depth 2 done'),
      reply().text('depth 1 done'),
      reply().text('depth 0 done'),
    );
    const opened = await h.client.request('session/open', { agent: 'a' });
    expect((await h.prompt(opened.sessionId, 'go')).text).toBe('depth 0 done');
    const deepest = String(toolMessages(h.llm.requests[3]!.body).at(-1)!.content);
    expect(deepest).toContain(
      'subagents nest at most 2 deep (agent.subagents.maxDepth), and this is depth 2',
    );
    expect(h.llm.requests).toHaveLength(6);
  });

  it('task calls past maxConcurrent in one step are not run, with a result that says so', async () => {
    const h = await startHarness('in-process', {
      mcp: '  {}\n',
      config: 'agent:\n  subagents:\n    maxConcurrent: 2\n',
      llm: {
        route: (request) =>
          firstUser(request).startsWith('job ')
            ? reply().text(`did ${firstUser(request)}`)
            : undefined,
      },
    });
    h.llm.queue(
      reply()
        .tool('task', { prompt: 'job 1' }, { id: 't1' })
        .tool('task', { prompt: 'job 2' }, { id: 't2' })
        .tool('task', { prompt: 'job 3' }, { id: 't3' }),
      reply().text('two of three'),
    );
    const id = await h.open();
    await h.prompt(id, 'fan out');
    const results = toolMessages(h.llm.requests.at(-1)!.body).map((m) => String(m.content));
    expect(results[0]).toContain('did job 1');
    expect(results[1]).toContain('did job 2');
    expect(results[2]).toContain(
      '3 task calls in one step; at most 2 start at once (agent.subagents.maxConcurrent)',
    );
    expect(h.llm.requests.filter((r) => firstUser(r) === 'job 3')).toHaveLength(0);
  });
});
