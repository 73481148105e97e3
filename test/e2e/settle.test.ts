import { readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitUntil } from '../../src/main/daemon/lifecycle.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { fixtureYaml } from './gateway.ts';
import { makeE2eWorkspace } from './workspace.ts';

// A daemon that has warmed itself (its API worker with the model's client library, the tools'
// definitions) and is left alone gives back what that start-up grew in its own thread
// (src/main/daemon/settle.ts): it keeps no more heap than it uses and a V8 floor, where it used to
// keep its grown young generation and its freed pages until V8's memory reducer, 8-20 s later or
// never (`bench/daemon-soak.bench.ts` measures the idle RSS).

/** `heap A → B MiB (C MiB in use)` of the daemon log line that starts with `prefix`. */
const reduction = (log: string, prefix: string) => {
  const line = log.split('\n').find((l) => l.includes(`"msg":"${prefix}`));
  const match = /heap ([\d.]+) → ([\d.]+) MiB \(([\d.]+) MiB in use\)/.exec(line ?? '');
  return match ? { before: +match[1]!, after: +match[2]!, used: +match[3]! } : undefined;
};

const THREADS = ['warmed; daemon thread: '];

describe('a warmed daemon left alone', () => {
  it('gives back the heap its start-up grew the daemon thread into, and answers as before', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      [
        'model: fake',
        'models:',
        '  fake:',
        '    provider: openai',
        `    baseUrl: ${llm.url}/v1`,
        '    model: fake-model',
        '    contextWindow: 32000',
        'mcpServers:',
        fixtureYaml('echo', 'echo'),
      ].join('\n'),
    );
    const log = () => {
      try {
        return readFileSync(nifflerPaths(ws.repo, ws.env).daemonLog, 'utf8');
      } catch {
        return '';
      }
    };
    expect((await ws.run(['mcp', 'status', '--wait'])).exitCode).toBe(0);
    expect(await waitUntil(() => THREADS.every((prefix) => reduction(log(), prefix)), 20_000)).toBe(
      true,
    );
    for (const prefix of THREADS) {
      const heap = reduction(log(), prefix)!;
      expect(heap.after, prefix).toBeLessThan(heap.before);
      // What a thread keeps beyond its live objects: V8's floor (a 1 MiB young generation, a
      // page or two per space), not the young generation its start-up grew (16 MiB here).
      expect(heap.after - heap.used, prefix).toBeLessThan(4);
    }
    llm.queue(reply().text('still here'));
    const turn = await ws.run(['-p', 'hi']);
    expect(turn.exitCode).toBe(0);
    expect(turn.stdout).toContain('still here');
  });
});
