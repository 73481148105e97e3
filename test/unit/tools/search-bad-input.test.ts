import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, symlinkSync, writeSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runTool, tempRepo, textOf } from './repo.ts';

// grep and glob on what a workspace should not hold but may: each gives a clear answer in
// bounded time and memory, and reads nothing outside the workspace.

const MiB = 1024 * 1024;

/** Writes `parts` one after another to `file` (a big file without a big string). */
const writeParts = (file: string, parts: Iterable<string | Buffer>) => {
  const fd = openSync(file, 'w');
  try {
    for (const part of parts)
      if (typeof part === 'string') writeSync(fd, part);
      else writeSync(fd, part);
  } finally {
    closeSync(fd);
  }
};

describe('grep and glob on bad input', () => {
  it('a FIFO and a socket are neither listed nor opened for reading (nothing blocks)', async () => {
    const repo = tempRepo();
    repo.write({ 'ok.txt': 'TODO here\n' });
    execFileSync('mkfifo', [path.join(repo.root, 'pipe.txt')]);
    const server = net.createServer().listen(path.join(repo.root, 'sock.txt'));
    onTestFinished(() => void server.close());
    await new Promise((resolve) => server.once('listening', resolve));
    expect(textOf(await runTool(repo.context, 'grep', { pattern: 'TODO' }))).toBe(
      'ok.txt:1: TODO here',
    );
    expect(textOf(await runTool(repo.context, 'glob', { pattern: '*.txt' }))).toBe('ok.txt');
    // Named as the path, the FIFO is refused, not waited on.
    expect(await runTool(repo.context, 'grep', { pattern: 'x', path: 'pipe.txt' })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('FIFO') },
    });
  });

  it('a directory symlink loop and a symlink out of the workspace are not followed', async () => {
    const repo = tempRepo();
    repo.write({ 'src/a.txt': 'TODO a\n' });
    symlinkSync('..', path.join(repo.root, 'src', 'loop'));
    symlinkSync(repo.outside, path.join(repo.root, 'out'));
    symlinkSync(path.join(repo.outside, 'secret.txt'), path.join(repo.root, 'secret.txt'));
    const result = await runTool(repo.context, 'grep', { pattern: 'TODO|SECRET' });
    expect(textOf(result)).toBe('src/a.txt:1: TODO a');
    expect(textOf(await runTool(repo.context, 'glob', { pattern: '**/*' }))).toBe('src/a.txt');
  });

  it.skipIf(process.getuid?.() === 0)(
    'an unreadable directory is named, and the rest searched',
    async () => {
      const repo = tempRepo();
      repo.write({ 'ok.txt': 'TODO\n', 'locked/in.txt': 'TODO\n' });
      chmodSync(path.join(repo.root, 'locked'), 0o000);
      onTestFinished(() => chmodSync(path.join(repo.root, 'locked'), 0o755));
      const result = await runTool(repo.context, 'grep', { pattern: 'TODO' });
      expect(textOf(result)).toMatch(/^ok\.txt:1: TODO/);
    },
  );

  it('a line of 50 MB is searched in its first 4 MiB, the lines after it with their numbers', async () => {
    const repo = tempRepo();
    const file = path.join(repo.root, 'long.txt');
    const block = 'a'.repeat(MiB);
    writeParts(file, [
      'needle at the start ',
      ...Array.from({ length: 50 }, () => block),
      ' needle at the end\nafter: needle\n',
    ]);
    const result = await runTool(repo.context, 'grep', { pattern: 'needle' });
    expect(textOf(result)).toMatch(
      /^long\.txt:1: needle at the start a+…\nlong\.txt:2: after: needle\n\(lines longer than 4 MiB were searched in their first 4 MiB only\)$/,
    );
  });

  it('a 2 GB file (sparse: zeros after a first line) is taken as binary at once', async () => {
    const repo = tempRepo();
    const file = path.join(repo.root, 'huge.bin');
    writeParts(file, ['needle\n']);
    execFileSync('truncate', ['-s', '2G', file]);
    const result = await runTool(repo.context, 'grep', { pattern: 'needle' });
    expect(textOf(result)).toBe(
      'No lines match /needle/ in the workspace.\n(1 binary files were not searched)',
    );
  });

  it('a file over several windows: matches, line numbers and context across their edges', async () => {
    const repo = tempRepo();
    // 103 bytes a line: the first 4 MiB window holds lines 1 to 40,721 whole.
    const line = (n: number, hit: boolean) =>
      `${hit ? 'HITS' : 'line'} ${String(n).padStart(6, '0')} ${'x'.repeat(90)}\n`;
    const lines = 130_000;
    const hits = new Set([1, 40_720, 40_723, 90_000, lines]);
    writeParts(
      path.join(repo.root, 'big.txt'),
      (function* () {
        for (let n = 1; n <= lines; n += 1000) {
          let chunk = '';
          for (let m = n; m < n + 1000 && m <= lines; m++) chunk += line(m, hits.has(m));
          yield chunk;
        }
      })(),
    );
    const numbers = (text: string) =>
      text.split('\n').map((l) => Number(/^big\.txt[:-](\d+)[:-] /.exec(l)?.[1]));
    const result = await runTool(repo.context, 'grep', { pattern: '^HITS' });
    expect(numbers(textOf(result))).toEqual([...hits]);
    expect(textOf(result)).toContain('big.txt:40723: HITS 040723 ');
    // Context from the window before (40,721) and after (40,722) the edge.
    const around = await runTool(repo.context, 'grep', { pattern: '^HITS 0407', '-C': 2 });
    expect(numbers(textOf(around))).toEqual([
      40718, 40719, 40720, 40721, 40722, 40723, 40724, 40725,
    ]);
    expect(textOf(around)).toContain('big.txt-40721- line 040721 ');
  });

  it('a binary file is skipped as ripgrep skips it: matches before the block with its NUL count', async () => {
    const repo = tempRepo();
    repo.write({ 'ok.txt': 'TODO text\n' });
    writeParts(path.join(repo.root, 'early.bin'), ['TODO\0 binary\n']);
    writeParts(path.join(repo.root, 'late.bin'), [
      'TODO first\n',
      'y'.repeat(200_000),
      '\nTODO late\n\0',
    ]);
    const result = await runTool(repo.context, 'grep', { pattern: 'TODO' });
    expect(textOf(result)).toBe(
      'late.bin:1: TODO first\nok.txt:1: TODO text\n(1 binary files were not searched)',
    );
  });

  it('a glob that matches nothing, and a directory named that does not exist', async () => {
    const repo = tempRepo();
    repo.write({ 'a.ts': '' });
    expect(await runTool(repo.context, 'glob', { pattern: '**/*.rs' })).toMatchObject({
      ok: true,
      output: 'No files match "**/*.rs" in the workspace.',
      structured: { complete: true, found: 0 },
    });
    expect(await runTool(repo.context, 'glob', { pattern: '*', path: 'nope' })).toMatchObject({
      ok: false,
      error: { code: 'not-found', message: 'nope does not exist' },
    });
  });

  it('reads nothing outside the workspace: a path there is refused', async () => {
    const repo = tempRepo();
    mkdirSync(path.join(repo.root, 'in'));
    expect(
      await runTool(repo.context, 'grep', { pattern: 'SECRET', path: repo.outside }),
    ).toMatchObject({ ok: false, error: { code: 'outside-workspace' } });
    expect(
      await runTool(repo.context, 'grep', { pattern: 'SECRET', path: '../outside' }),
    ).toMatchObject({ ok: false, error: { code: 'outside-workspace' } });
  });
});
