import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ToolsSchema } from '../../../src/main/config/schema.ts';
import { ToolsHost } from '../../../src/main/threads/tools.ts';
import { tempRepo, textOf } from '../../unit/tools/repo.ts';

const signal = () => new AbortController().signal;

const hostFor = (tools: unknown, env: Record<string, string>, root: string, maxThreads = 1) => {
  const host = new ToolsHost({ root, tools: ToolsSchema.parse(tools), env, maxThreads });
  onTestFinished(() => host.close());
  return host;
};

describe('ToolsHost limits', () => {
  it('ends a grep stuck on one file in a catastrophic regex, names the file and keeps serving', async () => {
    const repo = tempRepo();
    repo.write({ 'redos.txt': `${'a'.repeat(48)}!\n`, 'ok.txt': 'TODO fine\n' });
    // One thread: the search runs in its lead's thread, which is ended (and replaced).
    const host = hostFor({ searchLimits: { timeout: 2 } }, { NIFFLER_HOME: repo.home }, repo.root);
    // A backreference: V8's linear-time engine cannot take it over, so it backtracks for ages.
    const stuck = await host.run(
      { name: 'grep', args: { pattern: '^(a+)+\\1$', path: 'redos.txt' } },
      signal(),
    );
    expect(stuck).toEqual({
      ok: false,
      error: {
        code: 'timeout',
        message: expect.stringMatching(
          /^grep was stopped: the pattern ran for more than 0.5s on redos.txt without getting further/,
        ),
      },
    });
    // The same nesting without a backreference runs in linear time: an answer, not a timeout.
    expect(
      await host.run({ name: 'grep', args: { pattern: '^(a+)+$', path: 'redos.txt' } }, signal()),
    ).toMatchObject({ ok: true, output: expect.stringContaining('No lines match') });
    expect(await host.run({ name: 'grep', args: { pattern: 'TODO' } }, signal())).toMatchObject({
      ok: true,
      output: 'ok.txt:1: TODO fine',
    });
  });

  it('skips the file a catastrophic regex is stuck on when the search has threads to spare, and searches the rest', async () => {
    const repo = tempRepo();
    repo.write({
      'a.txt': 'aaa TODO\n',
      'redos.txt': `${'a'.repeat(48)}!\n`,
      'z.txt': 'aaaa\n',
    });
    // 8 s: a file may hold a thread 2 s; a new thread (from TypeScript, in tests) takes a while.
    const host = hostFor(
      { searchLimits: { timeout: 8 } },
      { NIFFLER_HOME: repo.home },
      repo.root,
      3,
    );
    const result = await host.run({ name: 'grep', args: { pattern: '^(a+)+\\1$|TODO' } }, signal());
    expect(result).toMatchObject({ ok: true, structured: { complete: true } });
    expect(textOf(result)).toMatch(
      /^a\.txt:1: aaa TODO\nz\.txt:1: aaaa\n\(the pattern ran too long on 1 file\(s\) and they were skipped: redos\.txt;/,
    );
  });

  it('says once per pool that bash is not sandboxed when bwrap cannot be found', async () => {
    const repo = tempRepo();
    const empty = path.join(repo.home, 'empty-bin');
    mkdirSync(empty, { recursive: true });
    const host = hostFor({}, { NIFFLER_HOME: repo.home, PATH: empty }, repo.root);
    const first = await host.run({ name: 'bash', args: { command: 'echo one' } }, signal());
    const second = await host.run({ name: 'bash', args: { command: 'echo two' } }, signal());
    expect(textOf(first)).toMatch(
      /^one\n\[note: bash is not sandboxed \(bubblewrap \(bwrap\) is not installed\); .* Install bubblewrap \(apt install bubblewrap\)/,
    );
    expect(textOf(second)).toBe('two\n[exit code 0]');
  });
});
