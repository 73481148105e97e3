import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { runSlash } from '../../../src/ui/app/commands.ts';
import type { SlashContext } from '../../../src/ui/app/slash/context.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { writeTranscripts } from '../../fixtures/transcripts.ts';
import { startHarness } from './harness.ts';

const ids = (found: { hits: { id: string }[] }) => found.hits.map((h) => h.id);

describe('session search', () => {
  it('finds a word from an answer among 2,000 generated transcripts, and rebuilds its index when missing', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    const dir = nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir;
    const all = writeTranscripts(dir, 2000, {
      1234: 'The culprit was the Xylophonic cache flush.',
    });
    const found = await h.client.request('session/search', { text: 'xylophonic' });
    expect(found).toEqual({
      hits: [
        expect.objectContaining({
          id: all[1234],
          snippet: expect.stringContaining('xylophonic cache'),
        }),
      ],
      problems: [],
    });
    const index = path.join(dir, 'search-index.tsv');
    expect(existsSync(index)).toBe(true);
    // Every word must be there: one that is not, none found.
    expect(await h.client.request('session/search', { text: 'xylophonic walrus' })).toEqual({
      hits: [],
      problems: [],
    });
    expect(ids(await h.client.request('session/search', { text: 'culprit FLUSH' }))).toEqual([
      all[1234],
    ]);

    // `/resume WORDS` lists what it finds; `/resume ID` resumes that one.
    const shown: { title?: string; text?: string }[] = [];
    const opened: unknown[] = [];
    const ctx = {
      client: h.client,
      isBusy: () => false,
      dispatch: (action: { title?: string; text?: string }) => shown.push(action),
      open: async (params: unknown) => {
        opened.push(params);
        return {} as never;
      },
    } as unknown as SlashContext;
    await runSlash('resume', ['culprit', 'xylophonic'], ctx);
    expect(shown).toEqual([
      expect.objectContaining({ title: 'Sessions mentioning "culprit xylophonic"' }),
    ]);
    expect(shown[0]!.text).toContain(all[1234]);
    expect(shown[0]!.text).toContain('/resume ID continues one');
    await runSlash('resume', [all[1234]!], ctx);
    expect(opened).toEqual([{ resume: all[1234] }]);

    rmSync(index);
    expect(ids(await h.client.request('session/search', { text: 'Xylophonic' }))).toEqual([
      all[1234],
    ]);

    // A turn that ends is in the index at once, found by its tool names too.
    h.llm.queue(reply().tool('list_dir', {}), reply().text('the walrus is here'));
    const id = await h.open();
    await h.prompt(id, 'where is it?');
    expect(ids(await h.client.request('session/search', { text: 'walrus' }))).toEqual([id]);
    expect(ids(await h.client.request('session/search', { text: 'list_dir walrus' }))).toEqual([
      id,
    ]);
    // Its next turn replaces its record: the newest answer is found too.
    h.llm.queue(reply().text('and the narwhal too'));
    await h.prompt(id, 'anything else?');
    expect(ids(await h.client.request('session/search', { text: 'narwhal walrus' }))).toEqual([id]);
  });

  it('skips garbage index records and unreadable transcripts, losing nothing, and refuses an empty search', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    const dir = nifflerPaths(h.root, { NIFFLER_HOME: h.home }).sessionsDir;
    const all = writeTranscripts(dir, 30, { 7: 'the Quokka answer', 8: 'a quokka again' });
    expect(ids(await h.client.request('session/search', { text: 'quokka' }))).toEqual([
      all[8],
      all[7],
    ]);
    const index = path.join(dir, 'search-index.tsv');
    // A torn record of session 7 (a killed process), a garbled one, and binary junk.
    const lines = readFileSync(index, 'utf8').split('\n');
    const seven = lines.find((l) => l.startsWith(`${all[7]}\t`))!;
    appendFileSync(index, `\n${seven.slice(0, 60)}\nnot\ta\trecord\n\u0000\u0001\t\t\t\t\n`);
    // A transcript that cannot be read (a directory by that name) and one of JSON garbage.
    mkdirSync(path.join(dir, '20250102-000000-aaaaaa.jsonl'));
    writeFileSync(path.join(dir, '20250102-000000-bbbbbb.jsonl'), '{"type":\n\u0000garbage\n');

    const found = await h.client.request('session/search', { text: 'quokka' });
    expect(ids(found)).toEqual([all[8], all[7]]);
    expect(found.problems).toEqual([
      expect.stringMatching(
        /20250102-000000-aaaaaa\.jsonl: it is a directory \(EISDIR\); left out of the search$/,
      ),
    ]);
    // The bad records are gone from the file, session 7 read again from its transcript.
    const rewritten = readFileSync(index, 'utf8');
    expect(rewritten).not.toContain('not\ta\trecord');
    expect(rewritten.split('\n').filter((l) => l.startsWith(`${all[7]}\t`))).toEqual([seven]);
    // A file that is not an index at all is rebuilt.
    writeFileSync(index, 'hello\n');
    expect(ids(await h.client.request('session/search', { text: 'quokka' }))).toEqual([
      all[8],
      all[7],
    ]);
    expect(readFileSync(index, 'utf8')).toMatch(/^#niffler-search-index 2\n/);

    await expect(h.client.request('session/search', { text: '  ' })).rejects.toThrow(
      /needs words to look for/,
    );
    await expect(h.client.request('session/search', { text: 'x', limit: 0 })).rejects.toThrow(
      /a search limit is a whole number from 1/,
    );
  });
});
