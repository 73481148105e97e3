import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  readBoundedFile,
  readBoundedFileSync,
  readFd,
  readFdSync,
} from '../../../src/workers/shared/bounded-read.ts';
import { ConfinedError } from '../../../src/workers/shared/confine.ts';
import { runTool, tempRepo, textOf, type TempRepo } from './repo.ts';

const swapper = fileURLToPath(new URL('../../fixtures/race/swap.mjs', import.meta.url));
const MARKER = 'OUTSIDE-MARKER-7f3a';
const ROUNDS = 3000;

/** Starts the swapper and resolves once it has swapped at least once; killed after the test. */
const startSwapping = async (args: string[]): Promise<void> => {
  const child = spawn(process.execPath, [swapper, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) if (line === 'ready') return;
  throw new Error('the swapper exited before it swapped');
};

/** A repo with a marker outside and, inside, `d/f.txt` and `safe.txt` saying SAFE. */
const raceRepo = (): TempRepo => {
  const repo = tempRepo();
  writeFileSync(path.join(repo.outside, 'f.txt'), `${MARKER}\n`);
  repo.write({ 'd/f.txt': 'SAFE\n', 'safe.txt': 'SAFE\n' });
  return repo;
};

/**
 * Runs `read` ROUNDS times, and on (up to 20 times as many) until both states of the swap were
 * met; counts what it saw.
 */
const race = async (read: () => Promise<string>) => {
  const seen = { leaks: 0, safe: 0, refused: 0 };
  for (let i = 0; i < ROUNDS || ((!seen.safe || !seen.refused) && i < 20 * ROUNDS); i++) {
    const text = await read();
    if (text.includes(MARKER)) seen.leaks++;
    else if (text.includes('SAFE')) seen.safe++;
    else seen.refused++;
  }
  return seen;
};

/** Starts turning the repository's directory `d` into a symlink to the outside and back. */
const swapDirectory = (repo: ReturnType<typeof raceRepo>) =>
  startSwapping(['dir', path.join(repo.root, 'd'), path.join(repo.root, 'd.real'), repo.outside]);

describe('confined reads under a racing symlink swap', () => {
  it('read_file never leaks the outside file while a directory turns into a symlink and back', async () => {
    const repo = raceRepo();
    await swapDirectory(repo);
    const seen = await race(async () =>
      textOf(await runTool(repo.context, 'read_file', { path: 'd/f.txt' })),
    );
    expect(seen.leaks).toBe(0);
    // Both states were met: the race was real, not a swapper that never got a turn.
    expect(seen.safe).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it('read_file never leaks through a last component swapped between inside and outside', async () => {
    const repo = raceRepo();
    const link = path.join(repo.root, 'link');
    await startSwapping([
      'link',
      link,
      path.join(repo.root, 'safe.txt'),
      path.join(repo.outside, 'f.txt'),
    ]);
    const seen = await race(async () =>
      textOf(await runTool(repo.context, 'read_file', { path: 'link' })),
    );
    expect(seen).toMatchObject({ leaks: 0 });
    expect(seen.safe).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  });

  it('readBoundedFileSync (config and prompt files) never leaks under the same race', async () => {
    const repo = raceRepo();
    await swapDirectory(repo);
    const file = path.join(repo.root, 'd', 'f.txt');
    const seen = await race(async () => {
      try {
        return readBoundedFileSync(file, { maxBytes: 1024, allowedRoots: [repo.root] });
      } catch (error) {
        if (error instanceof ConfinedError) return error.message;
        throw error;
      }
    });
    expect(seen.leaks).toBe(0);
    expect(seen.safe).toBeGreaterThan(0);
  });

  it('write_file never creates a file outside while a parent turns into a symlink', async () => {
    const repo = raceRepo();
    await swapDirectory(repo);
    for (let i = 0; i < ROUNDS / 3; i++)
      await runTool(repo.context, 'write_file', { path: `d/new/w${i}.txt`, content: 'x' });
    expect(readdirSync(repo.outside).sort()).toEqual(['f.txt', 'secret.txt']);
  });
});

/** The error `readBoundedFile` and `readBoundedFileSync` both give for `file`. */
const refusalOf = async (file: string, maxBytes = 1024 * 1024) => {
  const sync = (() => {
    try {
      readBoundedFileSync(file, { maxBytes });
      return null;
    } catch (error) {
      return error as ConfinedError;
    }
  })();
  const async = await readBoundedFile(file, { maxBytes }).then(
    () => null,
    (error: unknown) => error as ConfinedError,
  );
  expect(async?.message).toBe(sync?.message);
  return sync;
};

describe('bounded reads', () => {
  it('refuses /dev/zero, a FIFO and a 200 MB file with clear errors, reading none of them', async () => {
    const repo = tempRepo();
    const fifo = path.join(repo.root, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const big = path.join(repo.root, 'big.txt');
    closeSync(openSync(big, 'w'));
    truncateSync(big, 200 * 1024 * 1024); // sparse: 200 MB that takes no disk
    symlinkSync('/dev/zero', path.join(repo.root, 'zero.yaml'));
    expect(await refusalOf(path.join(repo.root, 'zero.yaml'))).toMatchObject({
      code: 'not-regular',
      message: expect.stringMatching(/zero\.yaml is a device file; only regular files/),
    });
    expect(await refusalOf(fifo)).toMatchObject({
      code: 'not-regular',
      message: expect.stringMatching(/fifo is a FIFO \(named pipe\); only regular files/),
    });
    expect(await refusalOf(big)).toMatchObject({
      code: 'too-large',
      message: `${big} is 200.0 MiB, over the 1.0 MiB this file may have; make it smaller, or check that it is the file you meant`,
    });
    expect(await refusalOf('/proc/self/environ')).toMatchObject({ code: 'kernel-file' });
  });

  it('reads at most the limit from a source whose size says nothing (/dev/zero)', async () => {
    const fd = openSync('/dev/zero', 'r');
    onTestFinished(() => closeSync(fd));
    expect(() => readFdSync(fd, 1024, '/dev/zero')).toThrow(
      '/dev/zero is more than 1.0 KiB, over the 1.0 KiB this file may have',
    );
    await expect(readFd(fd, 1024, '/dev/zero')).rejects.toMatchObject({ code: 'too-large' });
  });

  it('read_file refuses a FIFO, /dev/zero and a 200 MB binary file with clear errors', async () => {
    const repo = tempRepo();
    execFileSync('mkfifo', [path.join(repo.root, 'fifo')]);
    symlinkSync('/dev/zero', path.join(repo.root, 'zero'));
    const sparse = path.join(repo.root, 'sparse.bin');
    closeSync(openSync(sparse, 'w'));
    truncateSync(sparse, 200 * 1024 * 1024);
    expect(await runTool(repo.context, 'read_file', { path: 'fifo' })).toMatchObject({
      ok: false,
      error: { code: 'outside-workspace', message: expect.stringContaining('is a FIFO') },
    });
    expect(await runTool(repo.context, 'read_file', { path: 'zero' })).toMatchObject({
      ok: false,
      error: { code: 'outside-workspace', message: expect.stringContaining('/dev/zero') },
    });
    expect(await runTool(repo.context, 'read_file', { path: 'sparse.bin' })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('is a binary file (209715200 bytes)') },
    });
  });

  it('read_file cuts a line longer than the page can hold without reading it whole into memory', async () => {
    const repo = tempRepo({ maxFileBytes: 1024 });
    writeFileSync(path.join(repo.root, 'one-line.txt'), `${'a'.repeat(3_000_000)}\nsecond\n`);
    const result = await runTool(repo.context, 'read_file', { path: 'one-line.txt', limit: 1 });
    expect(textOf(result)).toBe(
      `     1\t${'a'.repeat(2000)}… [line cut]\n\n(lines 1-1; continue with offset=2)`,
    );
  });
});

describe('ignore files', () => {
  it('a .gitignore that is a FIFO or /dev/zero ignores nothing and stalls nothing', async () => {
    const repo = tempRepo();
    repo.write({ 'src/a.ts': 'TODO\n' });
    execFileSync('mkfifo', [path.join(repo.root, '.gitignore')]);
    symlinkSync('/dev/zero', path.join(repo.root, 'src', '.gitignore'));
    expect(textOf(await runTool(repo.context, 'grep', { pattern: 'TODO' }))).toBe(
      'src/a.ts:1: TODO',
    );
    expect(textOf(await runTool(repo.context, 'glob', { pattern: '*.ts' }))).toBe('src/a.ts');
  });
});

describe('excluded roots', () => {
  it('no file tool reads or writes $NIFFLER_HOME, even when it is inside the workspace', async () => {
    const repo = tempRepo();
    const home = path.join(repo.root, '.niffler-home');
    mkdirSync(path.join(home, 'outputs'), { recursive: true });
    writeFileSync(path.join(home, 'trust.json'), MARKER);
    writeFileSync(path.join(home, 'outputs', 'saved.txt'), 'saved output\n');
    const context = { ...repo.context, excluded: [home], outputsDir: path.join(home, 'outputs') };
    const read = await runTool(context, 'read_file', { path: '.niffler-home/trust.json' });
    expect(read).toMatchObject({ ok: false, error: { code: 'outside-workspace' } });
    expect(textOf(read)).toContain('which niffler keeps private');
    const write = await runTool(context, 'write_file', {
      path: '.niffler-home/trust.json',
      content: '{}',
    });
    expect(write).toMatchObject({ ok: false, error: { code: 'outside-workspace' } });
    const grep = await runTool(context, 'grep', { pattern: 'MARKER', glob: '**/*.json' });
    expect(grep).toMatchObject({ ok: true, data: { count: 0 } });
    // The outputs directory inside it stays readable: cut output is paged from there.
    expect(
      textOf(await runTool(context, 'read_file', { path: '.niffler-home/outputs/saved.txt' })),
    ).toContain('saved output');
    expect(existsSync(path.join(home, 'trust.json'))).toBe(true);
  });
});
