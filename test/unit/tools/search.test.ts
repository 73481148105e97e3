import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTool, tempRepo, textOf } from './repo.ts';

const files = {
  '.gitignore': 'node_modules/\nbuild/\n',
  '.github/ci.yml': 'name: ci # TODO',
  'build/out.ts': 'TODO built',
  'node_modules/x/index.ts': 'TODO dep',
  'src/a.ts': 'export const a = 1; // TODO one\n',
  'src/deep/b.ts': 'const b = 2;\n// todo two\n',
  'README.md': '# TODO readme\n',
};

describe('glob', () => {
  it('matches names at any depth without "/", honouring .gitignore and dotfiles', async () => {
    const repo = tempRepo();
    repo.write(files);
    expect(textOf(await runTool(repo.context, 'glob', { pattern: '*.ts' }))).toBe(
      'src/a.ts\nsrc/deep/b.ts',
    );
    expect(textOf(await runTool(repo.context, 'glob', { pattern: '*.yml' }))).toContain(
      'No files match',
    );
    expect(textOf(await runTool(repo.context, 'glob', { pattern: '.github/*.yml' }))).toBe(
      '.github/ci.yml',
    );
  });

  it('searches under a path and matches relative to it', async () => {
    const repo = tempRepo();
    repo.write(files);
    expect(
      await runTool(repo.context, 'glob', { pattern: 'deep/**/*.ts', path: 'src' }),
    ).toMatchObject({ ok: true, output: 'src/deep/b.ts', data: { count: 1 } });
  });

  it('caps the output and saves the full list', async () => {
    const repo = tempRepo({ maxChars: 200 });
    repo.write(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}.txt`, ''])));
    const result = await runTool(repo.context, 'glob', { pattern: '*.txt' });
    expect(result).toMatchObject({ ok: true, savedTo: expect.stringContaining(repo.home) });
    expect(textOf(result)).toContain('output cut: 200 of');
  });
});

describe('grep', () => {
  it('finds lines as path:line: text, honouring .gitignore and skipping dotfiles', async () => {
    const repo = tempRepo();
    repo.write(files);
    expect(textOf(await runTool(repo.context, 'grep', { pattern: 'TODO' }))).toBe(
      'README.md:1: # TODO readme\nsrc/a.ts:1: export const a = 1; // TODO one',
    );
  });

  it('ignores case, filters by glob and searches one file', async () => {
    const repo = tempRepo();
    repo.write(files);
    expect(
      textOf(
        await runTool(repo.context, 'grep', { pattern: 'todo', ignoreCase: true, glob: '*.ts' }),
      ),
    ).toBe('src/a.ts:1: export const a = 1; // TODO one\nsrc/deep/b.ts:2: // todo two');
    expect(
      textOf(await runTool(repo.context, 'grep', { pattern: 'const', path: 'src/deep/b.ts' })),
    ).toBe('src/deep/b.ts:1: const b = 2;');
  });

  it('skips binary files and explains an invalid pattern', async () => {
    const repo = tempRepo();
    writeFileSync(path.join(repo.root, 'bin.dat'), Buffer.from('TODO\0binary'));
    expect(textOf(await runTool(repo.context, 'grep', { pattern: 'TODO' }))).toContain('No lines');
    expect(await runTool(repo.context, 'grep', { pattern: '(' })).toMatchObject({
      error: { code: 'invalid-args', message: expect.stringContaining('regular expression') },
    });
  });
});
