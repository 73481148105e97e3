import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readTranscript } from '../../../src/main/engine/transcript.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { contextText } from '../../../src/ui/render/context.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness } from './harness.ts';

const WINDOW = 8000;

const isSummary = (request: RecordedRequest): boolean =>
  JSON.stringify(request.body.messages?.[0] ?? '').includes('You summarize a working session');

describe('/context: what the next request holds', () => {
  it('part by part in tokens and shares, the compactions made, the files of cleared outputs; without sending anything', async () => {
    const h = await startHarness('in-process', {
      mcp: '  {}\n',
      model: `    toolProtocol: native\n    contextWindow: ${WINDOW}\n`,
      config: 'agent:\n  git: false\n',
      llm: {
        contextWindow: WINDOW,
        route: (request) => (isSummary(request) ? reply().text('Goals: read notes.') : undefined),
      },
    });
    // An instruction file the repository is not trusted to give, and a user-level one given.
    h.file('AGENTS.md', 'Use tabs.\n');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${h.home}/NIFFLER.md`, `Answer in English. ${'Be precise. '.repeat(40)}\n`);
    for (let i = 0; i < 4; i++)
      h.file(`notes-${i}.txt`, `notes ${i}: ${'lorem ipsum '.repeat(400)}\n`);
    const id = await h.open();
    for (let t = 0; t < 4; t++) {
      h.llm.queue(reply().tool('read_file', { path: `notes-${t}.txt` }), reply().text(`read ${t}`));
      expect((await h.prompt(id, `read notes ${t}`)).outcome).toBe('answered');
    }
    const sent = h.llm.requests.length;
    const report = await h.client.request('session/context', { sessionId: id });
    expect(h.llm.requests).toHaveLength(sent);
    expect(report).toMatchObject({
      sessionId: id,
      model: 'fake',
      agent: 'build',
      window: WINDOW,
      windowSource: 'config',
      reserve: 2000,
      calibrated: true,
    });
    const names = report.parts.map((p) => p.name);
    expect(names).toContain("niffler's instructions");
    expect(names).toContain('instruction file: $NIFFLER_HOME/NIFFLER.md');
    expect(report.parts.find((p) => p.name === 'instruction file: AGENTS.md')).toMatchObject({
      tokens: 0,
      note: 'not given: the repository is not trusted',
    });
    expect(names.some((n) => /^tool definitions \(\d+ sent whole\)$/.test(n))).toBe(true);
    // What waits behind tool_search, if anything, is named with how many.
    for (const n of names.filter((n) => n.startsWith('tool_search')))
      expect(n).toMatch(/^tool_search \(\d+ tools behind it\)$/);
    expect(names.some((n) => /^messages of \d+ turn\(s\) kept of 4$/.test(n))).toBe(true);
    const sum = report.parts.reduce((total, p) => total + p.tokens, 0);
    expect(Math.abs(sum - report.total)).toBeLessThanOrEqual(report.parts.length);
    expect(report.total).toBeLessThanOrEqual(report.limit);

    const entries = readTranscript(
      nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir,
      id,
    ).entries;
    const made = entries.filter((e) => e.type === 'compaction');
    expect(made.length).toBeGreaterThan(0);
    expect(report.compactions).toHaveLength(made.length);
    expect(report.clearedOutputs.length).toBeGreaterThan(0);
    expect(report.clearedOutputs.every((o) => o.exists && o.tool === 'read_file')).toBe(true);

    const text = contextText(report);
    expect(text).toContain(`The next request of session ${id}: model fake, agent build`);
    expect(text).toMatch(/window 8,000 tokens \(from the config\)/);
    expect(text).toMatch(/kept for the answer\s+2,000\s+25\.0%/);
    expect(text).toContain(`Compactions made (${made.length}):`);
    expect(text).toContain('Cleared tool outputs, each in a file the model can read');

    // A cleared output's file gone: marked missing.
    rmSync(report.clearedOutputs[0]!.file);
    const again = await h.client.request('session/context', { sessionId: id });
    expect(again.clearedOutputs[0]!.exists).toBe(false);
    expect(contextText(again)).toContain(' (missing)');
    // The latest session by default; an unknown one says so.
    expect((await h.client.request('session/context', {})).sessionId).toBe(id);
    await expect(h.client.request('session/context', { sessionId: 'nope-123' })).rejects.toThrow(
      /nope-123/,
    );
  });
});
