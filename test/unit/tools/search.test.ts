import { utimesSync, writeFileSync } from 'node:fs';
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
    // Newest first: the two were written in the same moment or not, so compared as a set here.
    const found = textOf(await runTool(repo.context, 'glob', { pattern: '*.ts' }));
    expect(found.split('\n').sort()).toEqual(['src/a.ts', 'src/deep/b.ts']);
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

  it('pages by the output budget: the first line says so and gives the offset to go on from', async () => {
    const repo = tempRepo({ maxChars: 200 });
    repo.write(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}.txt`, ''])));
    const result = await runTool(repo.context, 'glob', { pattern: '*.txt' });
    const [first, ...rest] = textOf(result).split('\n');
    expect(first).toBe(
      `[incomplete: the output budget (200 characters, tools.output.maxChars) is full after 100 of 100 files; continue with offset: ${rest.length}]`,
    );
    expect(result).toMatchObject({
      ok: true,
      structured: { complete: false, incomplete: { reason: 'output', offset: rest.length } },
    });
    expect(result).not.toHaveProperty('savedTo');
    const next = await runTool(repo.context, 'glob', { pattern: '*.txt', offset: rest.length });
    expect(textOf(next).split('\n')[1]).not.toBe(rest[0]);
  });

  it('lists the newest first, and pages with head_limit and offset', async () => {
    const repo = tempRepo();
    repo.write({ 'a.md': '', 'b.md': '', 'c.md': '', 'd.md': '' });
    const at = (name: string, seconds: number) =>
      utimesSync(path.join(repo.root, name), seconds, seconds);
    at('a.md', 1_000);
    at('b.md', 4_000);
    at('c.md', 3_000);
    at('d.md', 2_000);
    expect(textOf(await runTool(repo.context, 'glob', { pattern: '*.md' }))).toBe(
      'b.md\nc.md\nd.md\na.md',
    );
    const page = await runTool(repo.context, 'glob', { pattern: '*.md', head_limit: 2, offset: 1 });
    expect(textOf(page)).toBe(
      'c.md\nd.md\n(head_limit 2 reached; more follow: continue with offset: 3)',
    );
    expect(page).toMatchObject({ structured: { complete: true, next: { offset: 3 } } });
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

describe('grep output modes', () => {
  const code = {
    'src/a.ts': 'one\ntwo TODO\nthree\nfour\nfive\nsix TODO\nseven\n',
    'src/b.ts': 'TODO first\nsecond\n',
    'docs/c.md': 'a TODO in docs\n',
    'src/d.py': 'print("todo")\n',
  };

  it('content with context: -B/-A lines as "path-N- text", groups apart by "--"', async () => {
    const repo = tempRepo();
    repo.write(code);
    const result = await runTool(repo.context, 'grep', {
      pattern: 'TODO',
      path: 'src/a.ts',
      '-B': 1,
      '-A': 1,
    });
    expect(textOf(result)).toBe(
      [
        'src/a.ts-1- one',
        'src/a.ts:2: two TODO',
        'src/a.ts-3- three',
        '--',
        'src/a.ts-5- five',
        'src/a.ts:6: six TODO',
        'src/a.ts-7- seven',
      ].join('\n'),
    );
    const joined = await runTool(repo.context, 'grep', {
      pattern: 'TODO',
      path: 'src/a.ts',
      '-C': 3,
    });
    expect(textOf(joined).split('\n')).toHaveLength(7);
    expect(textOf(joined)).not.toContain('--');
  });

  it('files_with_matches, count, -n false, -i, type and a "!" glob', async () => {
    const repo = tempRepo();
    repo.write(code);
    const grep = (args: Record<string, unknown>) =>
      runTool(repo.context, 'grep', { pattern: 'TODO', ...args }).then(textOf);
    expect(await grep({ output_mode: 'files_with_matches' })).toBe('docs/c.md\nsrc/a.ts\nsrc/b.ts');
    expect(await grep({ output_mode: 'count' })).toBe('docs/c.md: 1\nsrc/a.ts: 2\nsrc/b.ts: 1');
    expect(await grep({ '-n': false, path: 'src/b.ts' })).toBe('src/b.ts: TODO first');
    expect(await grep({ '-i': true, type: 'py' })).toBe('src/d.py:1: print("todo")');
    expect(await grep({ glob: '!*.md', output_mode: 'files_with_matches' })).toBe(
      'src/a.ts\nsrc/b.ts',
    );
    expect(await grep({ pattern: '(?i)todo', type: 'python' })).toBe('src/d.py:1: print("todo")');
  });

  it('multiline: a match may span lines, and every line it touches is shown', async () => {
    const repo = tempRepo();
    repo.write({ 'x.go': 'type T struct {\n  a int\n  field string\n}\n' });
    const result = await runTool(repo.context, 'grep', {
      pattern: 'struct \\{[\\s\\S]*?field',
      multiline: true,
    });
    expect(textOf(result)).toBe('x.go:1: type T struct {\nx.go:2:   a int\nx.go:3:   field string');
    const single = await runTool(repo.context, 'grep', { pattern: 'struct \\{[\\s\\S]*?field' });
    expect(textOf(single)).toContain('No lines match');
  });

  it('says what is wrong with a pattern, a type, an offset past the end', async () => {
    const repo = tempRepo();
    repo.write(code);
    expect(await runTool(repo.context, 'grep', { pattern: 'a(' })).toMatchObject({
      ok: false,
      error: {
        code: 'invalid-args',
        message: expect.stringContaining('not a valid JavaScript regular expression'),
      },
    });
    expect(await runTool(repo.context, 'grep', { pattern: 'a', type: 'cobol' })).toMatchObject({
      ok: false,
      error: {
        code: 'invalid-args',
        message: expect.stringMatching(/^type "cobol" is not known; known types: c, cpp,/),
      },
    });
    expect(
      textOf(
        await runTool(repo.context, 'grep', { pattern: 'TODO', output_mode: 'count', offset: 9 }),
      ),
    ).toBe('No entries past offset 9 (3 in all).');
  });
});
