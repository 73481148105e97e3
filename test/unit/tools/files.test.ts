import {
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  chmodSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTool, tempRepo, textOf } from './repo.ts';

describe('read_file', () => {
  it('numbers lines and pages with offset and limit', async () => {
    const repo = tempRepo();
    repo.write({ 'a.txt': Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') });
    expect(
      await runTool(repo.context, 'read_file', { path: 'a.txt', offset: 3, limit: 2 }),
    ).toEqual({
      ok: true,
      output: '     3\tline 3\n     4\tline 4\n\n(lines 3-4 of 10; continue with offset=5)',
      data: { path: 'a.txt', from: 3, to: 4, total: 10 },
    });
    const all = await runTool(repo.context, 'read_file', { path: 'a.txt' });
    expect(textOf(all)).toMatch(/ {4}10\tline 10\n$/);
  });

  it('accepts numbers sent as strings (small models do)', async () => {
    const repo = tempRepo();
    repo.write({ 'a.txt': 'one\ntwo\n' });
    const result = await runTool(repo.context, 'read_file', { path: 'a.txt', offset: '2' });
    expect(textOf(result)).toBe('     2\ttwo\n');
  });

  it('pages through a file larger than maxFileBytes by streaming', async () => {
    const repo = tempRepo({ maxFileBytes: 1000 });
    repo.write({ 'big.txt': Array.from({ length: 5000 }, (_, i) => `row ${i + 1}`).join('\n') });
    const result = await runTool(repo.context, 'read_file', {
      path: 'big.txt',
      offset: 4000,
      limit: 2,
    });
    expect(textOf(result)).toBe(
      '  4000\trow 4000\n  4001\trow 4001\n\n(lines 4000-4001; continue with offset=4002)',
    );
  });

  it('says how many lines there are when the offset is past the end, streamed or not', async () => {
    for (const maxFileBytes of [1000, 1024 * 1024]) {
      const repo = tempRepo({ maxFileBytes });
      repo.write({ 'big.txt': Array.from({ length: 500 }, (_, i) => `row ${i + 1}`).join('\n') });
      expect(await runTool(repo.context, 'read_file', { path: 'big.txt', offset: 900 })).toEqual({
        ok: false,
        error: { code: 'invalid-args', message: 'offset 900 is past the end (500 lines)' },
      });
      expect(
        textOf(await runTool(repo.context, 'read_file', { path: 'big.txt', offset: 499 })),
      ).toBe('   499\trow 499\n   500\trow 500\n');
    }
  });

  it('stops a page at maxChars and says where to continue', async () => {
    const repo = tempRepo({ maxChars: 100 });
    repo.write({ 'a.txt': Array.from({ length: 50 }, () => 'x'.repeat(20)).join('\n') });
    const result = await runTool(repo.context, 'read_file', { path: 'a.txt' });
    expect(textOf(result)).toContain('(lines 1-3 of 50; continue with offset=4)');
  });

  it('refuses binary files, directories and missing files with what to do', async () => {
    const repo = tempRepo();
    repo.write({ 'dir/x.txt': 'x' });
    writeFileSync(path.join(repo.root, 'blob.bin'), Buffer.from([1, 2, 0, 3]));
    const binary = await runTool(repo.context, 'read_file', { path: 'blob.bin' });
    expect(textOf(binary)).toMatch(/binary file \(4 bytes\).*xxd/);
    expect(await runTool(repo.context, 'read_file', { path: 'dir' })).toMatchObject({
      error: { code: 'invalid-args', message: 'dir is a directory; use list_dir to see it' },
    });
    expect(await runTool(repo.context, 'read_file', { path: 'nope.txt' })).toMatchObject({
      error: { code: 'not-found' },
    });
  });

  it('returns images as image content', async () => {
    const repo = tempRepo();
    const png = Buffer.from('89504e470d0a1a0a0000', 'hex');
    writeFileSync(path.join(repo.root, 'logo.png'), png);
    expect(await runTool(repo.context, 'read_file', { path: 'logo.png' })).toEqual({
      ok: true,
      output: 'logo.png: image/png image, 10 bytes',
      content: [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }],
    });
  });

  it('reports invalid arguments from the schema', async () => {
    const repo = tempRepo();
    const result = await runTool(repo.context, 'read_file', { offset: 0 });
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid-args' } });
    expect(textOf(result)).toContain('path');
  });
});

describe('list_dir', () => {
  it('lists a tree honouring nested .gitignore files and hiding dotfiles', async () => {
    const repo = tempRepo();
    repo.write({
      '.gitignore': 'dist/\n*.log\n',
      '.env': 'X=1',
      'a.log': '',
      'dist/out.js': '',
      'src/main.ts': '',
      'src/.gitignore': 'gen/\n',
      'src/gen/x.ts': '',
      'src/lib/util.ts': '',
    });
    symlinkSync('src/main.ts', path.join(repo.root, 'main-link'));
    expect(textOf(await runTool(repo.context, 'list_dir', { depth: 3 }))).toBe(
      ['./', 'main-link -> src/main.ts', 'src/', '  lib/', '    util.ts', '  main.ts'].join('\n'),
    );
    const hidden = textOf(await runTool(repo.context, 'list_dir', { hidden: true }));
    expect(hidden.split('\n')).toEqual([
      './',
      '.env',
      '.gitignore',
      'main-link -> src/main.ts',
      'src/',
    ]);
  });

  it('applies the root .gitignore when listing a subdirectory', async () => {
    const repo = tempRepo();
    repo.write({ '.gitignore': 'secret.ts\n', 'src/secret.ts': '', 'src/ok.ts': '' });
    expect(textOf(await runTool(repo.context, 'list_dir', { path: 'src' }))).toBe('src/\nok.ts');
  });
});

describe('path_info', () => {
  it('describes a file and a symlink with its target', async () => {
    const repo = tempRepo();
    repo.write({ 'run.sh': 'echo hi\n' });
    chmodSync(path.join(repo.root, 'run.sh'), 0o755);
    symlinkSync('run.sh', path.join(repo.root, 'link'));
    expect(await runTool(repo.context, 'path_info', { path: 'run.sh' })).toMatchObject({
      ok: true,
      structured: { path: 'run.sh', type: 'file', size: 8, mode: '0755' },
    });
    expect(await runTool(repo.context, 'path_info', { path: 'link' })).toMatchObject({
      ok: true,
      structured: {
        type: 'symlink',
        target: 'run.sh',
        resolved: 'run.sh',
        targetInfo: { type: 'file' },
      },
    });
  });

  it('describes directories, reports missing paths, and resolves .. before describing', async () => {
    const repo = tempRepo();
    repo.write({ 'src/a.ts': 'x\n' });
    const info = (input: string) => runTool(repo.context, 'path_info', { path: input });
    expect(await info('src')).toMatchObject({
      ok: true,
      structured: { path: 'src', type: 'directory' },
    });
    expect(await info('src/a.ts/')).toMatchObject({ structured: { path: 'src/a.ts', size: 2 } });
    expect(await info('src/b.ts')).toMatchObject({
      ok: false,
      error: { code: 'not-found', message: 'src/b.ts does not exist' },
    });
    expect(await info('src/..')).toMatchObject({ structured: { path: '.', type: 'directory' } });
  });

  it('describes a symlink that points outside without describing its target', async () => {
    const repo = tempRepo();
    symlinkSync('/etc/passwd', path.join(repo.root, 'pw'));
    const result = await runTool(repo.context, 'path_info', { path: 'pw' });
    expect(result).toMatchObject({
      ok: true,
      structured: { type: 'symlink', target: '/etc/passwd' },
    });
    expect(textOf(result)).toContain('the target is outside the allowed directories');
    expect(textOf(result)).not.toContain('targetInfo');
  });
});

describe('write_file', () => {
  it('creates parent directories and writes atomically (no temp file left)', async () => {
    const repo = tempRepo();
    const result = await runTool(repo.context, 'write_file', {
      path: 'a/b/c.txt',
      content: 'one\ntwo\n',
    });
    expect(textOf(result)).toBe('Created a/b/c.txt (2 lines, 8 bytes).');
    expect(readFileSync(path.join(repo.root, 'a/b/c.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(readdirSync(path.join(repo.root, 'a/b'))).toEqual(['c.txt']);
  });

  it('overwrites keeping the mode, and refuses a directory', async () => {
    const repo = tempRepo();
    repo.write({ 'run.sh': 'old' });
    chmodSync(path.join(repo.root, 'run.sh'), 0o750);
    const result = await runTool(repo.context, 'write_file', { path: 'run.sh', content: 'new' });
    expect(textOf(result)).toBe('Overwrote run.sh (1 lines, 3 bytes).');
    expect(statSync(path.join(repo.root, 'run.sh')).mode & 0o777).toBe(0o750);
    expect(await runTool(repo.context, 'write_file', { path: '.', content: 'x' })).toMatchObject({
      error: { code: 'invalid-args' },
    });
  });
});

describe('git’s places', () => {
  it('write_file and edit_file refuse any .git, through a symlink too, and a gitdir a .git file names', async () => {
    const repo = tempRepo();
    symlinkSync(path.join(repo.root, '.git'), path.join(repo.root, 'g'));
    repo.write({ 'store/config': '[core]\n', 'nested/x.txt': 'x' });
    const cases: [string, Record<string, unknown>][] = [
      ['write_file', { path: '.git/commondir', content: '../evil' }],
      ['write_file', { path: 'g/hooks/pre-commit', content: '#!/bin/sh' }],
      ['write_file', { path: 'nested/.git/config', content: '[core]' }],
      ['write_file', { path: 'nested/.git', content: 'gitdir: ../store' }],
    ];
    for (const [tool, args] of cases)
      expect(await runTool(repo.context, tool, args)).toMatchObject({
        ok: false,
        error: { code: 'denied', message: expect.stringContaining("is git's own state") },
      });
    // A workspace whose .git is a file naming another directory: that directory is git's too.
    const other = tempRepo();
    other.write({ 'store/config': '[core]\n' });
    rmSync(path.join(other.root, '.git'), { recursive: true });
    writeFileSync(path.join(other.root, '.git'), 'gitdir: store\n');
    expect(
      await runTool(other.context, 'edit_file', {
        path: 'store/config',
        oldText: '[core]',
        newText: '[core]\n\tfsmonitor = x',
      }),
    ).toMatchObject({ ok: false, error: { code: 'denied' } });
    expect(readFileSync(path.join(other.root, 'store/config'), 'utf8')).toBe('[core]\n');
  });
});

describe('edit_file', () => {
  it('replaces a unique piece of text and returns the unified diff', async () => {
    const repo = tempRepo();
    repo.write({ 'a.ts': 'const a = 1;\nconst b = 2;\n' });
    const result = await runTool(repo.context, 'edit_file', {
      path: 'a.ts',
      oldText: 'const b = 2;',
      newText: 'const b = 3;',
    });
    expect(textOf(result)).toBe(
      '--- a/a.ts\n+++ b/a.ts\n@@ -1,2 +1,2 @@\n const a = 1;\n-const b = 2;\n+const b = 3;\n',
    );
    expect(readFileSync(path.join(repo.root, 'a.ts'), 'utf8')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('fails clearly when the text is missing or not unique, and replaces all on request', async () => {
    const repo = tempRepo();
    repo.write({ 'a.txt': 'x\ny\nx\n' });
    expect(
      await runTool(repo.context, 'edit_file', { path: 'a.txt', oldText: 'z', newText: 'w' }),
    ).toMatchObject({ error: { code: 'not-found', message: expect.stringContaining('exactly') } });
    expect(
      await runTool(repo.context, 'edit_file', { path: 'a.txt', oldText: 'x', newText: 'w' }),
    ).toMatchObject({
      error: {
        code: 'conflict',
        message: expect.stringContaining('2 times in a.txt (lines 1, 3)'),
      },
    });
    await runTool(repo.context, 'edit_file', {
      path: 'a.txt',
      oldText: 'x',
      newText: 'w',
      replaceAll: true,
    });
    expect(readFileSync(path.join(repo.root, 'a.txt'), 'utf8')).toBe('w\ny\nw\n');
  });

  it('matches LF text in a CRLF file and keeps CRLF', async () => {
    const repo = tempRepo();
    repo.write({ 'win.txt': 'a\r\nb\r\nc\r\n' });
    await runTool(repo.context, 'edit_file', { path: 'win.txt', oldText: 'a\nb', newText: 'A\nB' });
    expect(readFileSync(path.join(repo.root, 'win.txt'), 'utf8')).toBe('A\r\nB\r\nc\r\n');
  });
});
