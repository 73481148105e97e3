import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MAX_SNAPSHOT_FILE_BYTES, SnapshotStore } from '../../../src/main/engine/snapshots.ts';

const setup = async () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-snap-')));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const root = path.join(base, 'repo');
  mkdirSync(path.join(root, 'src'), { recursive: true });
  await execa('git', ['init', '-q'], { cwd: root });
  const write = (file: string, text: string | Buffer) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  };
  const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
  return { base, root, write, read, store: new SnapshotStore(path.join(base, 'store'), root) };
};

describe('workspace snapshots for undo', () => {
  it('restores what a turn wrote, created and deleted — bash changes included — and leaves the rest', async () => {
    const ws = await setup();
    ws.write('src/a.ts', 'original\n');
    ws.write('src/gone.ts', 'will be deleted\n');
    ws.write('notes.txt', 'untracked before\n');
    ws.write('.gitignore', 'build/\n');
    ws.write('build/out.js', 'ignored\n');
    const before = await ws.store.take('before turn 1');
    expect(before.ok).toBe(true);
    if (!before.ok) return;

    ws.write('src/a.ts', 'changed by write_file\n');
    await execa('bash', ['-c', 'echo x > f && rm src/gone.ts'], { cwd: ws.root });
    ws.write('build/out.js', 'rebuilt\n');
    const after = await ws.store.take('after turn 1', before.commit);
    if (!after.ok) throw new Error(after.reason);
    const changes = await ws.store.changes(before.commit, after.commit);
    expect(changes).toEqual([
      { path: 'f', change: 'added' },
      { path: 'src/a.ts', change: 'modified' },
      { path: 'src/gone.ts', change: 'deleted' },
    ]);
    const diff = await ws.store.diffToNow(
      before.commit,
      changes.map((c) => c.path),
    );
    expect(diff).toContain('-changed by write_file\n+original');

    expect(await ws.store.restore(before.commit, changes)).toEqual([]);
    expect(ws.read('src/a.ts')).toBe('original\n');
    expect(ws.read('src/gone.ts')).toBe('will be deleted\n');
    expect(existsSync(path.join(ws.root, 'f'))).toBe(false);
    expect(ws.read('build/out.js')).toBe('rebuilt\n');
    expect(ws.read('notes.txt')).toBe('untracked before\n');
  });

  it('skips large untracked files with a note, and a huge untracked tree without hanging', async () => {
    const ws = await setup();
    ws.write('big.bin', Buffer.alloc(MAX_SNAPSHOT_FILE_BYTES + 1));
    ws.write('small.txt', 'x');
    const taken = await ws.store.take('t');
    expect(taken).toMatchObject({ ok: true, skipped: ['big.bin'] });
    await execa('bash', ['-c', 'mkdir -p many && cd many && seq 0 20000 | xargs touch'], {
      cwd: ws.root,
    });
    const refused = await ws.store.take('t2');
    expect(refused).toMatchObject({ ok: false });
    expect(!refused.ok && refused.reason).toMatch(
      /^200\d\d untracked files \(more than 20000\): not snapshotted; add them to \.gitignore to have undo here$/,
    );
  });

  it('never writes through a directory that became a symlink out of the workspace', async () => {
    const ws = await setup();
    ws.write('src/a.ts', 'a');
    const before = await ws.store.take('b');
    if (!before.ok) throw new Error(before.reason);
    const outside = path.join(ws.base, 'outside');
    mkdirSync(outside);
    rmSync(path.join(ws.root, 'src'), { recursive: true });
    await execa('ln', ['-s', outside, path.join(ws.root, 'src')]);
    const refused = await ws.store.restore(before.commit, [
      { path: 'src/a.ts', change: 'deleted' },
    ]);
    expect(refused).toEqual(['src/a.ts']);
    expect(existsSync(path.join(outside, 'a.ts'))).toBe(false);
  });
});
