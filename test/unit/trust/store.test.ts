import {
  chmodSync,
  chownSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readTrustStore } from '../../../src/main/trust/store.ts';
import { readStateFile } from '../../../src/workers/shared/state-file.ts';

const tempDir = () => {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-trust-')));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

describe('reading niffler’s own state files', () => {
  it('refuses a symlink, a FIFO, a directory, a file others may write, and one of another user', async () => {
    const dir = tempDir();
    const real = path.join(dir, 'real.json');
    writeFileSync(real, '{}', { mode: 0o600 });
    symlinkSync(real, path.join(dir, 'link.json'));
    await execa('mkfifo', [path.join(dir, 'fifo.json')]);
    writeFileSync(path.join(dir, 'open.json'), '{}');
    chmodSync(path.join(dir, 'open.json'), 0o666);
    expect(readStateFile(real)).toEqual({ kind: 'text', text: '{}' });
    expect(readStateFile(path.join(dir, 'none.json'))).toEqual({ kind: 'missing' });
    expect(readStateFile(path.join(dir, 'link.json'))).toEqual({
      kind: 'refused',
      why: 'it is a symlink',
    });
    expect(readStateFile(path.join(dir, 'fifo.json'))).toEqual({
      kind: 'refused',
      why: 'it is a FIFO',
    });
    expect(readStateFile(dir)).toMatchObject({ kind: 'refused' });
    expect(readStateFile(path.join(dir, 'open.json'))).toEqual({
      kind: 'refused',
      why: 'others may write it (group- or world-writable)',
    });
    if (process.getuid?.() === 0) {
      const theirs = path.join(dir, 'theirs.json');
      writeFileSync(theirs, '{}', { mode: 0o600 });
      chownSync(theirs, 65534, 65534);
      expect(readStateFile(theirs)).toEqual({
        kind: 'refused',
        why: 'it belongs to uid 65534, not to you (uid 0)',
      });
    }
  });

  it('a trust store niffler cannot rely on is a problem naming the file and the reset', () => {
    const dir = tempDir();
    const file = path.join(dir, 'trust.json');
    writeFileSync(file, JSON.stringify({ version: 9 }), { mode: 0o600 });
    const state = readTrustStore(file, { HOME: dir });
    expect(state).toEqual({
      ok: false,
      problem:
        '~/trust.json: not a trust store niffler knows; niffler will trust nothing until it is reset: rm ~/trust.json, then niffler trust in each repository you trust',
    });
  });
});

describe('two front-ends trusting at once', () => {
  it('lose no write: 8 processes each trust a repository in one store', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'trust.json');
    const script = `
      import { trustRepository } from ${JSON.stringify(path.resolve('src/main/trust/decide.ts'))};
      const root = process.argv[1];
      for (let i = 0; i < 20; i++)
        trustRepository(${JSON.stringify(file)}, root + '/' + i, { parts: [], digest: 'd' + i });
    `;
    await Promise.all(
      Array.from({ length: 8 }, (_, n) =>
        execa(process.execPath, [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          script,
          `/repo${n}`,
        ]),
      ),
    );
    const store = JSON.parse(readFileSync(file, 'utf8')) as { workspaces: Record<string, unknown> };
    expect(Object.keys(store.workspaces)).toHaveLength(160);
  }, 60_000);
});
