import { execFileSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isInside,
  isRefused,
  lstatIfExists,
  resolveEntry,
  resolvePath,
} from '../../../src/workers/tools/sandbox.ts';
import { runTool, tempRepo, textOf, type TempRepo } from './repo.ts';

interface Attempt {
  name: string;
  tool: string;
  args: (repo: TempRepo) => Record<string, unknown>;
  setup?: (repo: TempRepo) => void;
  /** A file outside that must not exist afterwards. */
  mustNotExist?: (repo: TempRepo) => string;
}

const secret = (repo: TempRepo) => path.join(repo.outside, 'secret.txt');
const link = (target: string, at: string) => symlinkSync(target, at);

const ATTEMPTS: Attempt[] = [
  { name: '.. to a sibling', tool: 'read_file', args: () => ({ path: '../outside/secret.txt' }) },
  { name: 'absolute path outside', tool: 'read_file', args: (r) => ({ path: secret(r) }) },
  { name: '/etc/passwd', tool: 'read_file', args: () => ({ path: '/etc/passwd' }) },
  {
    name: '.. hidden in the middle',
    tool: 'read_file',
    args: () => ({ path: 'src/../../outside/secret.txt' }),
  },
  {
    name: 'symlink to /etc',
    tool: 'read_file',
    setup: (r) => link('/etc', path.join(r.root, 'etc')),
    args: () => ({ path: 'etc/passwd' }),
  },
  {
    name: 'symlink chain',
    tool: 'read_file',
    setup: (r) => {
      link(secret(r), path.join(r.root, 'c'));
      link('c', path.join(r.root, 'b'));
      link('b', path.join(r.root, 'a'));
    },
    args: () => ({ path: 'a' }),
  },
  {
    name: 'symlinked parent directory',
    tool: 'read_file',
    setup: (r) => link(r.outside, path.join(r.root, 'out')),
    args: () => ({ path: 'out/secret.txt' }),
  },
  {
    name: 'new file under a symlinked directory',
    tool: 'write_file',
    setup: (r) => link(r.outside, path.join(r.root, 'out')),
    args: () => ({ path: 'out/new/created.txt', content: 'x' }),
    mustNotExist: (r) => path.join(r.outside, 'new'),
  },
  {
    name: 'overwrite through a symlink to an outside file',
    tool: 'write_file',
    setup: (r) => link(secret(r), path.join(r.root, 'innocent.txt')),
    args: () => ({ path: 'innocent.txt', content: 'overwritten' }),
  },
  {
    name: 'dangling symlink to a new outside file',
    tool: 'write_file',
    setup: (r) => link(path.join(r.outside, 'planted.txt'), path.join(r.root, 'dangle.txt')),
    args: () => ({ path: 'dangle.txt', content: 'planted' }),
    mustNotExist: (r) => path.join(r.outside, 'planted.txt'),
  },
  {
    name: 'edit outside',
    tool: 'edit_file',
    args: () => ({ path: '../outside/secret.txt', oldText: 'TOP', newText: 'NO' }),
  },
  { name: '/proc/self/environ', tool: 'read_file', args: () => ({ path: '/proc/self/environ' }) },
  {
    name: '/proc/self/root through a symlink',
    tool: 'read_file',
    setup: (r) => link('/proc/self/root', path.join(r.root, 'proc-root')),
    args: () => ({ path: 'proc-root/etc/passwd' }),
  },
  { name: 'device file /dev/zero', tool: 'read_file', args: () => ({ path: '/dev/zero' }) },
  {
    name: 'symlink to a device file',
    tool: 'read_file',
    setup: (r) => link('/dev/urandom', path.join(r.root, 'random')),
    args: () => ({ path: 'random' }),
  },
  {
    name: 'FIFO inside the workspace',
    tool: 'read_file',
    setup: (r) => execFileSync('mkfifo', [path.join(r.root, 'pipe')]),
    args: () => ({ path: 'pipe' }),
  },
  {
    name: 'NUL byte',
    tool: 'read_file',
    args: () => ({ path: 'README.md\0/../../outside/secret.txt' }),
  },
  { name: 'very long path', tool: 'read_file', args: () => ({ path: 'a/'.repeat(3000) + 'x' }) },
  {
    name: 'name over 255 bytes',
    tool: 'write_file',
    args: () => ({ path: 'n'.repeat(300), content: 'x' }),
  },
  {
    name: 'backslash separators',
    tool: 'read_file',
    args: () => ({ path: '..\\outside\\secret.txt' }),
  },
  {
    name: 'hard link to an outside file (read)',
    tool: 'read_file',
    setup: (r) => linkSync(secret(r), path.join(r.root, 'hard.txt')),
    args: () => ({ path: 'hard.txt' }),
  },
  {
    name: 'hard link to an outside file (edit)',
    tool: 'edit_file',
    setup: (r) => linkSync(secret(r), path.join(r.root, 'hard.txt')),
    args: () => ({ path: 'hard.txt', oldText: 'TOP', newText: 'NO' }),
  },
  { name: 'home directory', tool: 'read_file', args: () => ({ path: '~/.ssh/id_rsa' }) },
  { name: 'list_dir ..', tool: 'list_dir', args: () => ({ path: '..' }) },
  { name: 'glob in /etc', tool: 'glob', args: () => ({ pattern: '*', path: '/etc' }) },
  { name: 'grep outside', tool: 'grep', args: () => ({ pattern: 'SECRET', path: '../outside' }) },
  {
    name: 'path_info of a hard link to an outside file',
    tool: 'path_info',
    setup: (r) => linkSync(secret(r), path.join(r.root, 'hard.txt')),
    args: () => ({ path: 'hard.txt' }),
  },
  { name: 'path_info of ..', tool: 'path_info', args: () => ({ path: 'src/../..' }) },
  { name: 'path_info outside', tool: 'path_info', args: (r) => ({ path: secret(r) }) },
  {
    name: 'write into the outputs directory (read-only)',
    tool: 'write_file',
    setup: (r) => mkdirSync(r.context.outputsDir, { recursive: true }),
    args: (r) => ({ path: path.join(r.context.outputsDir, 'x.txt'), content: 'x' }),
    mustNotExist: (r) => path.join(r.context.outputsDir, 'x.txt'),
  },
];

/** Every file under `dir` with its content and mtime, to prove nothing outside changed. */
const snapshot = (dir: string): Record<string, string> => {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, name);
    const stats = statSync(file);
    files[name] = stats.isFile()
      ? `${readFileSync(file, 'utf8')}@${stats.mtimeMs}`
      : `dir@${stats.mtimeMs}`;
  }
  return files;
};

describe('confinement: escape attempts', () => {
  it('has at least 15 attempts', () => expect(ATTEMPTS.length).toBeGreaterThanOrEqual(15));

  it.each(ATTEMPTS)('refuses $name', async (attempt) => {
    const repo = tempRepo();
    repo.write({ 'README.md': 'hello\n', 'src/a.ts': 'x\n' });
    attempt.setup?.(repo);
    const before = snapshot(repo.outside);
    const result = await runTool(repo.context, attempt.tool, attempt.args(repo));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('outside-workspace');
    expect(textOf(result)).not.toContain('TOP SECRET');
    expect(textOf(result)).toContain(repo.root); // the refusal names the allowed roots
    expect(snapshot(repo.outside)).toEqual(before);
    if (attempt.mustNotExist) expect(existsSync(attempt.mustNotExist(repo))).toBe(false);
  });

  it('grep never follows a symlink to an outside file', async () => {
    const repo = tempRepo();
    symlinkSync(secret(repo), path.join(repo.root, 'leak.txt'));
    const result = await runTool(repo.context, 'grep', { pattern: 'SECRET' });
    expect(result).toMatchObject({ ok: true });
    expect(textOf(result)).not.toContain('TOP SECRET');
  });

  it('allows tools.allowedPaths and the outputs directory for reading', async () => {
    const repo = tempRepo();
    repo.context.allowedPaths = [repo.outside];
    expect(await runTool(repo.context, 'read_file', { path: secret(repo) })).toMatchObject({
      ok: true,
      output: expect.stringContaining('TOP SECRET'),
    });
  });
});

describe('isInside', () => {
  it('is true for the parent itself and paths below it, not for siblings sharing a prefix', () => {
    expect(isInside('/work/repo', '/work/repo')).toBe(true);
    expect(isInside('/work/repo/src/a.ts', '/work/repo')).toBe(true);
    expect(isInside('/work/repo-old/a.ts', '/work/repo')).toBe(false);
    expect(isInside('/work', '/work/repo')).toBe(false);
  });

  it('takes / as a root: everything is inside it', () => {
    expect(isInside('/', '/')).toBe(true);
    expect(isInside('/etc', '/')).toBe(true);
    expect(isInside('/work/repo/src', '/')).toBe(true);
  });
});

describe('resolveEntry', () => {
  it('gives what resolvePath gives, or leaves the path to it', async () => {
    const repo = tempRepo();
    repo.write({ 'README.md': 'hello\n', 'src/a.ts': 'x\n' });
    linkSync(secret(repo), path.join(repo.root, 'hard.txt'));
    link('README.md', path.join(repo.root, 'readme'));
    link(repo.outside, path.join(repo.root, 'out'));
    execFileSync('mkfifo', [path.join(repo.root, 'pipe')]);
    // The plain names resolveEntry answers itself; symlinks, special names, refusals and unknown
    // stats it leaves to resolvePath.
    const answered = [
      'README.md',
      'src',
      'src/',
      'src/a.ts',
      'src/./a.ts',
      'src/missing/new.ts',
      'README.md/x',
      'missing',
      path.join(repo.root, 'src', 'a.ts'),
    ];
    const inputs = [
      ...answered,
      '.',
      '',
      '..',
      'src/..',
      'readme',
      'out',
      'out/secret.txt',
      'hard.txt',
      'pipe',
      'n'.repeat(300),
      'src/a\\b',
    ];
    const told: string[] = [];
    for (const input of inputs) {
      const dir = await resolvePath(path.dirname(input || '.'), repo.context, 'read');
      const expected = await resolvePath(input, repo.context, 'read');
      if (isRefused(dir)) continue;
      const name = path.basename(input || '.');
      const stats = await lstatIfExists(path.join(dir.real, name)).catch(() => undefined);
      const entry = resolveEntry(input, dir, stats);
      if (entry === undefined) continue;
      told.push(input);
      expect(entry, input).toEqual(expected);
    }
    expect(told).toEqual(answered);
  });
});
