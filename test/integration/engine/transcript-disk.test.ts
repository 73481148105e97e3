import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readTranscript, Transcript } from '../../../src/main/engine/transcript.ts';
import { fillDisk, mountTmpfs } from '../../fixtures/tmpfs.ts';

const message = (turn: number, content: string) => ({
  type: 'message' as const,
  time: 't',
  turn,
  message: { role: 'user' as const, content },
});

describe('a transcript on a full disk (a small tmpfs; root only)', () => {
  it('writes each record whole or not at all, says why, and goes on once there is room', async (ctx) => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'nf-disk-'));
    onTestFinished(() => rmSync(base, { recursive: true, force: true }));
    const dir = path.join(base, 'sessions');
    if (!mountTmpfs(dir, 'size=64k')) return ctx.skip();
    const transcript = Transcript.open(dir, 's');
    onTestFinished(() => transcript.close());
    transcript.append(message(1, 'before'));
    await transcript.flushed();

    // Room for a page of a record several pages long: the write goes in part, then fails.
    const filler = fillDisk(dir, 4096);
    transcript.append(message(2, 'x'.repeat(20_000)));
    await expect(transcript.flushed()).rejects.toThrow(
      `could not write the transcript ${path.join(dir, 's.jsonl')}: the disk is full (ENOSPC)`,
    );
    expect(readFileSync(path.join(dir, 's.jsonl'), 'utf8')).toBe(
      JSON.stringify(message(1, 'before')) + '\n',
    );

    rmSync(filler);
    transcript.append(message(3, 'after'));
    await transcript.flushed();
    const loaded = readTranscript(dir, 's');
    expect(loaded.warnings).toEqual([]);
    expect(loaded.messages.map((m) => ('content' in m ? m.content : null))).toEqual([
      'before',
      'after',
    ]);
  });
});
