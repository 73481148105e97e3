import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ToolsSchema } from '../../../src/main/config/schema.ts';
import { ToolsHost } from '../../../src/main/threads/tools.ts';
import { tempRepo, textOf } from '../../unit/tools/repo.ts';

const signal = () => new AbortController().signal;

const hostFor = (tools: unknown, env: Record<string, string>, root: string) => {
  const host = new ToolsHost({ root, tools: ToolsSchema.parse(tools), env, maxThreads: 1 });
  onTestFinished(() => host.close());
  return host;
};

describe('ToolsHost limits', () => {
  it('ends a grep stuck in a catastrophic regex at tools.searchLimits.timeout; the pool keeps serving', async () => {
    const repo = tempRepo();
    repo.write({ 'redos.txt': `${'a'.repeat(48)}!\n`, 'ok.txt': 'TODO fine\n' });
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
        message: expect.stringContaining(
          'grep ran longer than 2s, the tools.searchLimits.timeout limit, and was stopped',
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
