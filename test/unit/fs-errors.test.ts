import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '../../src/main/log.ts';
import { ServerLog } from '../../src/workers/mcp/logs.ts';
import { describeFsError, makeDirSync } from '../../src/workers/shared/fs-errors.ts';
import { capOutput } from '../../src/workers/shared/output.ts';
import { mountTmpfs } from '../fixtures/tmpfs.ts';

const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-fs-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** A path under a regular file: every write there fails with ENOTDIR. */
const blocked = () => {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'file'), '');
  return path.join(dir, 'file', 'sub');
};

describe('disk faults in plain words', () => {
  it.each([
    ['ENOSPC', 'the disk is full (ENOSPC)'],
    ['EROFS', 'the file system is read-only (EROFS)'],
    ['EACCES', 'permission denied (EACCES)'],
  ])('%s', (code, words) => {
    expect(describeFsError(Object.assign(new Error(`${code}: x`), { code }))).toBe(words);
  });

  it('a directory on a read-only disk fails with EROFS, not the ENOENT Node says (root only)', (ctx) => {
    const dir = path.join(tempDir(), 'ro');
    if (!mountTmpfs(dir, 'ro,size=64k')) return ctx.skip();
    expect(() => makeDirSync(path.join(dir, 'sessions', 'key'))).toThrow(
      expect.objectContaining({ code: 'EROFS', path: path.join(dir, 'sessions') }),
    );
  });

  it('logs that cannot be written say why, and recover', () => {
    const file = path.join(blocked(), 'daemon.log');
    const log = createLogger({ file });
    log.info('lost');
    expect(log.problem()).toBe(
      `could not write the log ${file}: a part of the path is not a directory (ENOTDIR)`,
    );
    const server = new ServerLog(file, 1024);
    server.write('stderr', 'lost');
    expect(server.problem).toBe(log.problem());
  });

  it('an output that cannot be saved is cut with a note saying why the rest is lost', async () => {
    const dir = blocked();
    const { output, savedTo } = await capOutput('x'.repeat(50), {
      maxChars: 10,
      outputsDir: dir,
      label: 't',
    });
    expect(savedTo).toBeUndefined();
    expect(output).toBe(
      `${'x'.repeat(10)}\n\n[output cut at 10 of 50 characters; the rest is lost: could not save it in ${dir}: a part of the path is not a directory (ENOTDIR)]`,
    );
  });
});
