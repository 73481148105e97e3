import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { pruneOutputs } from '../../src/workers/shared/prune.ts';

const DAY = 24 * 3_600_000;
const now = Date.parse('2026-06-01T12:00:00Z');

/** A saved output of `kb` KiB last changed `daysAgo` days before `now`. */
const saved = (dir: string, name: string, kb: number, daysAgo: number) => {
  const file = path.join(dir, name);
  writeFileSync(file, Buffer.alloc(kb * 1024));
  const at = new Date(now - daysAgo * DAY);
  utimesSync(file, at, at);
};

const workspace = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-prune-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

describe('pruning saved outputs', () => {
  it('removes what is older than the age limit, then the oldest beyond the size limit', async () => {
    const dir = workspace();
    saved(dir, 'ancient.txt', 1, 30);
    saved(dir, 'old.txt', 4, 3);
    saved(dir, 'older.txt', 4, 4);
    saved(dir, 'new.txt', 4, 1);
    saved(dir, 'now.txt', 64, 0.001); // being paged through: kept whatever the size
    const result = await pruneOutputs(dir, { maxAgeMs: 7 * DAY, maxBytes: 68 * 1024 }, now);
    expect(result).toEqual({ removed: 3, bytes: 9 * 1024 });
    expect(readdirSync(dir).sort()).toEqual(['new.txt', 'now.txt']);
  });

  it('leaves a directory within its limits alone, and a missing one is nothing to prune', async () => {
    const dir = workspace();
    saved(dir, 'a.txt', 1, 1);
    expect(await pruneOutputs(dir, { maxAgeMs: 7 * DAY, maxBytes: 1 << 20 }, now)).toEqual({
      removed: 0,
      bytes: 0,
    });
    expect(await pruneOutputs(path.join(dir, 'none'), { maxAgeMs: 1, maxBytes: 1 }, now)).toEqual({
      removed: 0,
      bytes: 0,
    });
  });
});
