import { readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitUntil } from '../../src/main/daemon/lifecycle.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { makeE2eWorkspace } from './workspace.ts';

// A daemon nobody uses ends its API worker (daemon/api-idle.ts; after a minute, here at once
// through NIFFLER_API_IDLE_MS) and starts it again for the next session.

describe('an unused daemon', () => {
  it('ends its API worker, and the next prompt starts it again and is answered', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const ws = makeE2eWorkspace();
    ws.env['NIFFLER_API_IDLE_MS'] = '0';
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n`,
    );
    const log = () => {
      try {
        return readFileSync(nifflerPaths(ws.repo, ws.env).daemonLog, 'utf8');
      } catch {
        return '';
      }
    };
    const ended = () => log().split('ended the API worker: unused').length - 1;
    llm.queue(reply().text('first'), reply().text('second'));
    const first = await ws.run(['-p', 'one']);
    expect(first.stdout).toContain('first');
    expect(await waitUntil(() => ended() >= 1, 20_000)).toBe(true);
    const second = await ws.run(['-p', 'two']);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toContain('second');
    // And it is ended again once that front-end has gone.
    expect(await waitUntil(() => ended() >= 2, 20_000)).toBe(true);
  });
});
