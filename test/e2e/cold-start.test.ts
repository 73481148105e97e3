import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { nifflerPaths } from '../../src/main/paths.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { makeE2eWorkspace } from './workspace.ts';

// The bin starts the workspace's daemon for a prompt before it loads the rest of the front-end
// (src/main/daemon/spawn.ts, startDaemonEarly); nothing else starts one that would not have.

describe('a cold start', () => {
  it('of a prompt starts the daemon from the bin, for a prompt; two prompts at once share it', async () => {
    const ws = makeE2eWorkspace();
    const llm = await startFakeLlm({ fallback: reply().text('ok') });
    onTestFinished(() => llm.close());
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n`,
    );
    const [a, b] = await Promise.all([ws.run(['-p', 'one']), ws.run(['-p', 'two'])]);
    expect([a.exitCode, b.exitCode, a.stdout, b.stdout]).toEqual([0, 0, 'ok', 'ok']);
    const status = await ws.runJson<{ pid: number }>(['daemon', 'status']);
    // Started for a prompt: the API worker started with the servers (see EngineOptions.promptSoon).
    expect(readFileSync(`/proc/${status.pid}/cmdline`, 'utf8').split('\0')).toContain(
      '--for-prompt',
    );
  });

  it.each([
    [['mcp', 'list']],
    [['--set', 'daemon.idleMinutes=5', 'mcp', 'list']],
    [['-m', 'fake', 'config', 'show']],
    [['--help']],
    [['task', 'list']],
    [['--no-daemon', '-p', 'hi']],
  ])('of `niffler %j` starts no daemon', async (args) => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal('mcpServers: {}\n');
    await ws.run(args);
    expect(existsSync(nifflerPaths(ws.repo, ws.env).socket)).toBe(false);
  });
});
