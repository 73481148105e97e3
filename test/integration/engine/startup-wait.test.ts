import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  realpathSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startInProcess } from '../../../src/main/daemon/in-process.ts';
import { testEnv } from '../../fixtures/env.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../../fixtures/fake-llm/server.ts';
import { waitUntil } from '../../../src/main/daemon/lifecycle.ts';

const tsx = import.meta.resolve('tsx');
const gated = path.resolve('test/fixtures/mcp/gated.ts');

/**
 * An engine whose config has a server that stays `starting` until the test writes to its FIFO,
 * `mcp.startupWait` of 60 s, and a daemon start `startedAgo` ms back.
 */
const setup = async (startedAgo: number) => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-sw-')));
  const root = path.join(base, 'repo');
  const home = path.join(base, 'h');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  mkdirSync(home, { recursive: true });
  const gate = path.join(base, 'gate');
  execFileSync('mkfifo', [gate]);
  const llm = await startFakeLlm();
  writeFileSync(
    path.join(home, 'config.yaml'),
    `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n    toolProtocol: native\n` +
      `mcp:\n  startupWait: 60\nagent:\n  git: false\n` +
      `mcpServers:\n  gated:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify(['--import', tsx, gated])}\n    env:\n      NIFFLER_TEST_GATE: ${JSON.stringify(gate)}\n`,
  );
  const engine = await startInProcess({
    root,
    env: testEnv({ HOME: base, NIFFLER_HOME: home }),
    startedAt: Date.now() - startedAgo,
  });
  onTestFinished(async () => {
    // Lets a server still waiting go (without blocking when none reads the FIFO any more).
    try {
      const fd = openSync(gate, constants.O_WRONLY | constants.O_NONBLOCK);
      writeSync(fd, 'go');
      closeSync(fd);
    } catch {
      // no reader: the server had started
    }
    await engine.close();
    await llm.close();
    rmSync(base, { recursive: true, force: true });
  });
  return { engine, llm, gate };
};

describe('mcp.startupWait is counted from the daemon start, not from the prompt', () => {
  it('a daemon up for longer than the wait sends the prompt at once, naming the server still starting', async () => {
    const { engine, llm } = await setup(120_000);
    const { client } = engine;
    const notices: string[] = [];
    client.onNotification('session/event', ({ event }) => {
      if (event.type === 'notice') notices.push(event.text);
    });
    llm.queue(reply().text('answered without it'));
    const { sessionId } = await client.request('session/open', {});
    const turn = client.request('session/prompt', { sessionId, text: 'hi', interactive: false });
    // Bounded: counted from the prompt, the wait would hold the request for 60 s.
    expect(await waitUntil(() => llm.requests.length > 0, 20_000)).toBe(true);
    expect(await turn).toMatchObject({ outcome: 'answered', text: 'answered without it' });
    expect(notices).toContain('server "gated" is still starting: its tools are not in this turn');
    const status = await client.request('mcp/status', {});
    expect(status.servers.find((s) => s.name === 'gated')?.state).toBe('starting');
  });

  it('a daemon just started waits for it, and the prompt has its tools once it is up', async () => {
    const { engine, llm, gate } = await setup(0);
    const { client } = engine;
    llm.queue(reply().text('with it'));
    const { sessionId } = await client.request('session/open', {});
    const turn = client.request('session/prompt', { sessionId, text: 'hi', interactive: false });
    // The turn waits on the server: nothing reaches the model while it starts.
    await client.request('session/list', {});
    expect(llm.requests).toHaveLength(0);
    await writeFile(gate, 'go');
    expect(await turn).toMatchObject({ outcome: 'answered' });
    // Its tools are in the request (behind tool_search, on the default 16k window).
    expect(JSON.stringify(llm.requests[0]!.body.tools)).toContain('gated__');
  });
});
