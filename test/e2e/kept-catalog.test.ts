import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitUntil } from '../../src/main/daemon/lifecycle.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.ts';
import { fixtureYaml } from './gateway.ts';
import { makeE2eWorkspace } from './workspace.ts';
import { timelineSteps } from './timeline.ts';

// A cold start builds its first request from the catalogs kept from the servers' last run, while
// the servers themselves are still starting (see src/workers/mcp/kept-catalog.ts). The server
// here is the conformance reference server behind a FIFO: it cannot answer `initialize` until the
// test writes to the FIFO, so "before the server is ready" needs no timing.

const toolNames = (body: { tools?: { function: { name: string } }[] }) =>
  (body.tools ?? []).map((t) => t.function.name);

/** A workspace whose model is `llm` and whose one server, `gated`, starts when `open()` is called. */
const gatedWorkspace = (llm: FakeLlm, extra = '') => {
  const ws = makeE2eWorkspace();
  const gate = path.join(ws.base, 'gate');
  execFileSync('mkfifo', [gate]);
  const config = (args = '') =>
    [
      'model: fake',
      'models:',
      '  fake:',
      '    provider: openai',
      `    baseUrl: ${llm.url}/v1`,
      '    model: fake-model',
      '    toolProtocol: native',
      // Roomy enough that the server's tools are sent whole, not behind tool_search.
      '    contextWindow: 128000',
      'mcp:',
      '  startupWait: 120',
      extra,
      'mcpServers:',
      fixtureYaml(
        'gated',
        'gated',
        `    env:\n      NIFFLER_TEST_GATE: ${JSON.stringify(gate)}\n${args}`,
      ),
    ].join('\n');
  ws.writeGlobal(config());
  const paths = nifflerPaths(ws.repo, ws.env);
  return {
    ws,
    paths,
    /** Lets the server start (the FIFO's reader gets its bytes). */
    open: () => writeFile(gate, 'go'),
    reconfigure: (args: string) => ws.writeGlobal(config(args)),
    keptFiles: () => {
      try {
        return readdirSync(paths.catalogsDir).filter((f) => f.endsWith('.json'));
      } catch {
        return [];
      }
    },
    log: () => {
      try {
        return readFileSync(paths.daemonLog, 'utf8');
      } catch {
        return '';
      }
    },
  };
};

/** A first run: the server starts and its catalog is kept; then the daemon stops. */
const firstRun = async (w: ReturnType<typeof gatedWorkspace>) => {
  const status = w.ws.run(['mcp', 'status', '--wait']);
  await w.open();
  expect((await status).exitCode).toBe(0);
  // The catalog is written in the background once the server is ready.
  expect(await waitUntil(() => w.keptFiles().length === 1, 10_000)).toBe(true);
  expect((await w.ws.run(['daemon', 'stop'])).exitCode).toBe(0);
};

/**
 * A cold `-p` whose kept catalog is not used (the daemon logs `why`): no request goes out before
 * the gated server answers, and the one request then carries the server's own tools.
 */
const waitedFor = async (w: ReturnType<typeof gatedWorkspace>, llm: FakeLlm, why: string) => {
  const run = w.ws.run(['-p', 'hi']);
  expect(await waitUntil(() => w.log().includes(why), 20_000)).toBe(true);
  expect(llm.requests).toHaveLength(0);
  await w.open();
  expect((await run).exitCode).toBe(0);
  expect(toolNames(llm.requests[0]!.body)).toContain('gated__test_simple_text');
};

describe('the kept catalog of a server (cold start)', () => {
  it('is private, sends the first request before the server is ready, and a call of its tool waits and succeeds', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const w = gatedWorkspace(llm);
    await firstRun(w);
    const [file] = w.keptFiles();
    expect(statSync(w.paths.catalogsDir).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(w.paths.catalogsDir, file!)).mode & 0o777).toBe(0o600);

    llm.queue(reply().tool('gated__test_simple_text', {}), reply().text('done'));
    const run = w.ws.run(['-p', 'call it', '--yes']);
    // The first request reaches the model while the server waits on its FIFO: its tools come
    // from the kept catalog.
    const [first] = await llm.waitForRequests(1);
    expect(toolNames(first!.body)).toContain('gated__test_simple_text');
    // The model's call waits for the server, which may start only now.
    await w.open();
    const result = await run;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('done');
    const second = llm.requests[1]!.body as { messages: { role: string; content: string }[] };
    expect(JSON.stringify(second.messages.at(-1))).toContain('This is a simple text response');
  });

  it('lets the first request go before the servers are spawned, when all their tools are kept', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const w = gatedWorkspace(llm);
    await firstRun(w);
    // The cold start's timeline (workers/shared/timeline.ts): one line a step, in the order taken.
    const timeline = path.join(w.ws.base, 'timeline');
    w.ws.env['NIFFLER_TIMELINE'] = timeline;
    // The servers wait for the first request however long a loaded machine takes to send it.
    w.ws.env['NIFFLER_MCP_DEFER_MS'] = '600000';
    llm.queue(reply().tool('gated__test_simple_text', {}), reply().text('done'));
    const run = w.ws.run(['-p', 'call it', '--yes']);
    await llm.waitForRequests(1);
    await w.open();
    expect((await run).exitCode).toBe(0);
    const steps = timelineSteps(timeline);
    const sent = steps.indexOf('request sent to the API worker');
    const spawned = steps.indexOf('first server spawned');
    expect(sent).toBeGreaterThanOrEqual(0);
    expect(spawned).toBeGreaterThan(sent);
    // Each step once: the booted API worker's `ready` is marked where it was booted alone.
    expect(steps.filter((step) => step === 'API worker ready')).toHaveLength(1);
  });

  it('lets the first request go before the servers are spawned on a first start when MCP tools are deferred (tools.search: always)', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const w = gatedWorkspace(llm, 'tools:\n  search: always');
    expect(w.keptFiles()).toEqual([]);
    const timeline = path.join(w.ws.base, 'timeline');
    w.ws.env['NIFFLER_TIMELINE'] = timeline;
    // The servers wait for the first request however long a loaded machine takes to send it.
    w.ws.env['NIFFLER_MCP_DEFER_MS'] = '600000';
    llm.queue(reply().text('done'));
    const run = w.ws.run(['-p', 'hi']);
    // No kept catalog, and the server cannot start until the test opens its gate: the request
    // goes all the same (with the built-in tools; the server's, once known, behind tool_search).
    const [first] = await llm.waitForRequests(1);
    expect(toolNames(first!.body)).toContain('read_file');
    expect(toolNames(first!.body)).not.toContain('gated__test_simple_text');
    await w.open();
    expect((await run).exitCode).toBe(0);
    const steps = timelineSteps(timeline);
    expect(steps.indexOf('first server spawned')).toBeGreaterThan(
      steps.indexOf('request sent to the API worker'),
    );
  });

  it('of a changed definition is not used: the server is waited for as on a first start', async () => {
    const llm = await startFakeLlm({ fallback: reply().text('ok') });
    onTestFinished(() => llm.close());
    const w = gatedWorkspace(llm);
    await firstRun(w);
    // Another argument: another definition, whose tools nothing tells yet.
    w.reconfigure('    workingDir: .\n');
    await waitedFor(w, llm, 'the server definition changed since it was written');
  });

  it('that is corrupt is ignored with a log line, and the server is waited for', async () => {
    const llm = await startFakeLlm({ fallback: reply().text('ok') });
    onTestFinished(() => llm.close());
    const w = gatedWorkspace(llm);
    await firstRun(w);
    const file = path.join(w.paths.catalogsDir, w.keptFiles()[0]!);
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 200));
    await waitedFor(w, llm, 'it is not valid JSON (corrupt or cut short)');
  });

  it('that the live one revises: a tool gone from it answers as unknown, and the session is told', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const w = gatedWorkspace(llm);
    await firstRun(w);
    // The kept file names a tool the server no longer has (as after an upgrade of the server).
    const file = path.join(w.paths.catalogsDir, w.keptFiles()[0]!);
    const kept = JSON.parse(readFileSync(file, 'utf8')) as {
      catalog: { tools: { name: string; inputSchema: object }[] };
    };
    kept.catalog.tools.push({ name: 'retired_tool', inputSchema: { type: 'object' } });
    writeFileSync(file, JSON.stringify(kept));

    llm.queue(reply().tool('gated__retired_tool', {}), reply().text('done'));
    const run = w.ws.run(['-p', 'call it', '--yes']);
    const [first] = await llm.waitForRequests(1);
    expect(toolNames(first!.body)).toContain('gated__retired_tool');
    await w.open();
    const result = await run;
    expect(result.exitCode).toBe(0);
    const second = llm.requests[1]!;
    expect(toolNames(second.body)).not.toContain('gated__retired_tool');
    expect(JSON.stringify(second.body.messages.at(-1))).toContain(
      'no MCP tool named \\"gated__retired_tool\\"',
    );
    expect(result.stderr).toContain('its tools changed since the last run (gone: retired_tool)');
  });
});
