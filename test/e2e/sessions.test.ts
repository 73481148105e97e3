import { describe, expect, it, onTestFinished } from 'vitest';
import { nifflerPaths } from '../../src/main/paths.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { writeTranscripts } from '../fixtures/transcripts.ts';
import { makeE2eWorkspace } from './workspace.ts';

interface Found {
  hits: { id: string; title: string; updatedAt: string; snippet: string }[];
  problems: string[];
}

describe('niffler sessions search (built binary, fake LLM)', () => {
  it('finds a one-shot session by a word of its answer, as JSON and as a table, beside 300 others', async () => {
    const ws = makeE2eWorkspace();
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n`,
    );
    writeTranscripts(nifflerPaths(ws.repo, ws.env).sessionsDir, 300);
    llm.queue(reply().text('The flaky test was the Pangolin fixture.'));
    expect((await ws.run(['-p', 'why is CI red?'])).exitCode).toBe(0);
    const [latest] = await ws.runJson<{ id: string }[]>(['sessions']);

    const found = await ws.runJson<Found>(['sessions', 'search', 'pangolin', 'FIXTURE']);
    expect(found).toEqual({
      hits: [
        {
          id: latest!.id,
          title: 'why is CI red?',
          updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          snippet: expect.stringContaining('the pangolin fixture'),
        },
      ],
      problems: [],
    });
    expect(await ws.runJson<Found>(['sessions', 'search', 'pangolin', 'walrus'])).toEqual({
      hits: [],
      problems: [],
    });
    expect(
      (await ws.runJson<Found>(['sessions', 'search', 'deploy', '-n', '5'])).hits,
    ).toHaveLength(5);

    const table = await ws.run(['sessions', 'search', 'pangolin']);
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toContain(latest!.id);
    expect(table.stdout).toContain('why is CI red?');
    expect(table.stdout).toContain('niffler --resume ID');
    const none = await ws.run(['sessions', 'search', 'walrus']);
    expect(none.stdout).toBe('No session of this workspace mentions "walrus".');
    const bad = await ws.run(['sessions', 'search', 'x', '--limit', 'lots']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('expected a whole number from 1 to 1000');
  });
});
