import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolsSchema } from '../../../src/main/config/schema.ts';
import { builtinTool, isConfigured } from '../../../src/main/engine/capabilities.ts';
import { ToolsHost } from '../../../src/main/threads/tools.ts';
import { builtinTools } from '../../../src/workers/protocol/tools.ts';
import { isAlive, tempRepo, waitForLines, type TempRepo } from '../../unit/tools/repo.ts';

describe('ToolsHost: the real piscina pool and worker file', () => {
  let repo: TempRepo;
  let host: ToolsHost;

  beforeAll(() => {
    repo = tempRepo({}, false);
    host = new ToolsHost({
      root: repo.root,
      // Unsandboxed: the bash test checks the pids its command prints, which in bubblewrap's
      // PID namespace would not be this system's (test/unit/tools/sandbox.test.ts covers that).
      tools: ToolsSchema.parse({ bash: { sandbox: 'off' } }),
      env: { NIFFLER_HOME: repo.home },
      maxThreads: 4,
    });
  });

  afterAll(async () => {
    await host.close();
    repo.remove();
  });

  it('runs 8 concurrent reads and a cancelled long bash, then stays healthy', async () => {
    repo.write(
      Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.txt`, `file ${i}\n`])),
    );
    const cancel = new AbortController();
    const bash = host.run(
      {
        name: 'bash',
        args: { command: 'sleep 300 & echo $! > pid; sleep 300 & echo $! >> pid; wait' },
      },
      cancel.signal,
    );
    const reads = Array.from({ length: 8 }, (_, i) =>
      host.run({ name: 'read_file', args: { path: `f${i}.txt` } }, new AbortController().signal),
    );
    const pids = await waitForLines(path.join(repo.root, 'pid'), 2);
    cancel.abort();
    expect(await bash).toEqual({
      ok: false,
      error: { code: 'canceled', message: 'bash was canceled' },
    });
    // run() resolved at once; the task ends its group before it returns to the pool.
    await host.settled();
    for (const pid of pids.map(Number)) expect(isAlive(pid)).toBe(false);
    const after = await host.run(
      { name: 'bash', args: { command: 'echo healthy' } },
      new AbortController().signal,
    );
    const results = await Promise.all(reads);
    results.forEach((result, i) =>
      expect(result).toMatchObject({ ok: true, output: `     1\tfile ${i}\n` }),
    );
    expect(after).toMatchObject({ ok: true, output: 'healthy\n[exit code 0]' });
  });

  it('terminates a worker that does not return after cancel, and the pool recovers', async () => {
    const stuck = new ToolsHost({
      root: repo.root,
      tools: ToolsSchema.parse({}),
      env: { NIFFLER_HOME: repo.home },
      maxThreads: 1,
      cancelGraceMs: 100,
    });
    repo.write({ 'redos.txt': `${'a'.repeat(40)}!\n` });
    const cancel = new AbortController();
    // A catastrophic regular expression keeps the worker's event loop busy: it cannot hear cancel.
    // (With a backreference: V8's linear-time engine, which ends plain ones, cannot run it.)
    const grep = stuck.run(
      { name: 'grep', args: { pattern: '^(a+)+\\1$', path: 'redos.txt' } },
      cancel.signal,
    );
    cancel.abort();
    expect(await grep).toMatchObject({ ok: false, error: { code: 'canceled' } });
    await stuck.settled();
    const next = await stuck.run(
      { name: 'read_file', args: { path: 'redos.txt' } },
      new AbortController().signal,
    );
    expect(next).toMatchObject({ ok: true });
    await stuck.close();
  });

  it('returns failures as results: bad args, unknown and disabled tools, aborted before start', async () => {
    const signal = new AbortController().signal;
    expect(await host.run({ name: 'read_file', args: { path: 42 } }, signal)).toMatchObject({
      ok: false,
      error: { code: 'invalid-args' },
    });
    expect(await host.run({ name: 'rm_rf', args: {} }, signal)).toMatchObject({
      error: { code: 'invalid-args', message: 'rm_rf is not a built-in tool' },
    });
    expect(
      await host.run({ name: 'glob', args: { pattern: '*' } }, AbortSignal.abort()),
    ).toMatchObject({
      error: { code: 'canceled' },
    });
    const limited = new ToolsHost({
      root: repo.root,
      tools: ToolsSchema.parse({ disabled: ['bash'] }),
      env: { NIFFLER_HOME: repo.home },
      maxThreads: 1,
    });
    // The pool describes every built-in; the capabilities module leaves a disabled one out of
    // what a model or a gateway client is offered, and the pool refuses to run it.
    const bash = limited.definitions().find((tool) => tool.name === 'bash')!;
    expect(isConfigured(builtinTool(bash), { disabledBuiltins: ['bash'] })).toBe(false);
    expect(await limited.run({ name: 'bash', args: { command: 'true' } }, signal)).toMatchObject({
      error: { code: 'denied' },
    });
    await limited.close();
  });

  it('keeps a todo list per session under $NIFFLER_HOME', async () => {
    const signal = new AbortController().signal;
    await host.run(
      { name: 'todo', args: { action: 'add', items: ['one'] }, sessionId: 'a' },
      signal,
    );
    expect(
      await host.run({ name: 'todo', args: { action: 'list' }, sessionId: 'b' }, signal),
    ).toMatchObject({ output: 'The todo list is empty.' });
    expect(
      await host.run({ name: 'todo', args: { action: 'list' }, sessionId: 'a' }, signal),
    ).toMatchObject({ output: '[ ] 1. one' });
  });

  it('offers the ten built-in tools with JSON-schema parameters', () => {
    const names = host.definitions().map((tool) => tool.name);
    expect(names).toEqual([
      'read_file',
      'list_dir',
      'path_info',
      'write_file',
      'edit_file',
      'glob',
      'grep',
      'bash',
      'fetch',
      'todo',
    ]);
    expect(host.definitions()[0]?.parameters).toMatchObject({
      type: 'object',
      required: ['path'],
      properties: { path: { type: 'string' }, offset: { type: 'integer' } },
    });
    expect(builtinTools()).toBe(builtinTools()); // the schemas are built once
  });
});
