import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '../../src/main/log.ts';
import { fillDisk, mountTmpfs } from '../fixtures/tmpfs.ts';

const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-logdisk-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

describe('the daemon log on a disk that fills up (a small tmpfs; root only)', () => {
  it('says the disk is full, leaves no half line behind, and goes on once there is room', (ctx) => {
    const dir = path.join(tempDir(), 'disk');
    if (!mountTmpfs(dir, 'size=64k')) return ctx.skip();
    const file = path.join(dir, 'logs', 'daemon.log');
    const log = createLogger({ file });
    log.info('before', { n: 0 });
    // The file is open now; the disk fills up behind its back. What is left of the file's last
    // page takes a few lines whole, then part of one: that part must not stay.
    const filler = fillDisk(dir, 0);
    for (let n = 1; n <= 50; n++) log.info('while full', { n, pad: 'x'.repeat(200) });
    expect(log.problem()).toBe(`could not write the log ${file}: the disk is full (ENOSPC)`);
    rmSync(filler);
    log.info('after', { n: 51 });
    expect(log.problem()).toBeUndefined();
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    // Every line in the file is a whole JSON line: a write cut short by the full disk left none.
    const parsed = lines.map((line) => JSON.parse(line) as { msg: string });
    expect(parsed[0]!.msg).toBe('before');
    expect(parsed.at(-1)!.msg).toBe('after');
  });
});
