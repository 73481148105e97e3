import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { isAlive, waitUntil } from '../../../src/main/daemon/lifecycle.ts';
import { LspHost } from '../../../src/main/threads/lsp.ts';
import type { LspServerStatus, LspTiming } from '../../../src/workers/protocol/lsp.ts';

// The LSP worker with real server processes that misbehave as real ones do (a fake server over
// the protocol library, test/fixtures/lsp/fake-server.ts): crashes, hangs, floods, answers about
// files elsewhere; and files no server should be given.

const tsx = import.meta.resolve('tsx');
const FAKE = path.resolve('test/fixtures/lsp/fake-server.ts');

/** A workspace and a host running the fake server in `mode` for `.fake` files. */
const setup = async (mode: string, timing: LspTiming = {}, extra: string[] = []) => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'i36-lsp-')));
  const root = path.join(base, 'ws');
  mkdirSync(root);
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const host = await LspHost.start({
    root,
    excluded: [path.join(base, 'home')],
    logsDir: path.join(base, 'logs'),
    servers: [
      {
        name: 'fake',
        command: process.execPath,
        args: ['--import', tsx, FAKE, mode, ...extra],
        languages: { '.fake': 'fake' },
        source: 'yours',
      },
    ],
    timing: { initialDelayMs: 20, maxDelayMs: 100, startupTimeoutMs: 20_000, ...timing },
  });
  onTestFinished(() => host.close());
  const file = (name: string, text: string | Buffer) => {
    const full = path.join(root, name);
    writeFileSync(full, text);
    return full;
  };
  const fake = async (): Promise<LspServerStatus> => (await host.status())[0]!;
  const until = async (test: (s: LspServerStatus) => boolean) =>
    expect(await waitUntil(async () => test(await fake()), 30_000)).toBe(true);
  return { base, root, host, file, fake, until };
};

/** An edit as the engine makes one: old text to the server, the change, its diagnostics. */
const edit = async (host: LspHost, file: string, text: string, waitMs = 10_000) => {
  await host.prepare([file], 5_000);
  writeFileSync(file, text);
  return (
    await host.diagnose({ files: [file], deadline: Date.now() + waitMs, warnings: false }, 500)
  )[0]!;
};

describe('the LSP worker (real server processes)', () => {
  it('a pushing server: an edit gets the errors it brought, not the ones the file had; a fix gets none', async () => {
    const { host, file, until } = await setup('push');
    const main = file('main.fake', 'fine\nERROR old\n');
    await host.start([{ name: 'fake', warmFile: main }]);
    await until((s) => s.state === 'ready' && s.files === 1);
    const broke = await edit(host, main, 'fine\nERROR old\nERROR new\n');
    expect(broke).toMatchObject({
      file: 'main.fake',
      outcome: 'checked',
      baseline: true,
      errors: 2,
    });
    expect(broke.introduced).toEqual([
      {
        file: 'main.fake',
        line: 3,
        column: 1,
        severity: 'error',
        code: 'E1',
        message: 'ERROR on line 3',
      },
    ]);
    const fixed = await edit(host, main, 'fine\nERROR old\n');
    expect(fixed).toMatchObject({ outcome: 'checked', introduced: [], errors: 1 });
    // A file the change creates had nothing before it: all it has is new.
    const created = await edit(host, path.join(path.dirname(main), 'new.fake'), 'ERROR\n');
    expect(created).toMatchObject({ file: 'new.fake', baseline: true, errors: 1 });
    expect(created.introduced).toHaveLength(1);
  });

  it('what a server says of files outside the workspace never comes back, and is noted', async () => {
    const { host, file, fake, until } = await setup('outside');
    const main = file('main.fake', 'fine\n');
    await host.start([{ name: 'fake', warmFile: main }]);
    await until((s) => s.state === 'ready');
    const outcome = await edit(host, main, 'ERROR here\n');
    expect(outcome.introduced.map((d) => d.file)).toEqual(['main.fake']);
    expect(JSON.stringify(outcome)).not.toContain('outside-the-workspace');
    const { notes } = await fake();
    expect(notes.map((n) => n.message).join('\n')).toMatch(
      /outside-the-workspace\.ts, outside the workspace: left out/,
    );
    const answer = await host.query({ operation: 'diagnostics' }, Date.now() + 5_000, 500);
    expect(answer).toContain('main.fake:1:1 error E1: ERROR on line 1');
    expect(answer).not.toContain('outside-the-workspace');
  });

  it('a server that crashes on start is restarted with backoff, then given up on, saying why', async () => {
    const { host, until, fake } = await setup('crash-on-start', { maxFailures: 3 });
    await host.start([{ name: 'fake' }]);
    await until((s) => s.state === 'failed' && s.nextRestartAt === null && s.restarts === 2);
    // Given up, it stays so: an edit does not start it round its crashes again.
    await host.start([{ name: 'fake' }]);
    expect(await fake()).toMatchObject({ state: 'failed', restarts: 2 });
    const { lastError } = await fake();
    expect(lastError?.message).toMatch(
      /^exited with code 3: fatal: the fake server cannot start \(as asked\) \(its log: .*fake\.log\); gave up after 3 failures/,
    );
  });

  it('a server that never answers initialize is ended at the start-up timeout and restarted', async () => {
    const { host, until, fake } = await setup('hang-initialize', {
      startupTimeoutMs: 300,
      maxFailures: 2,
    });
    await host.start([{ name: 'fake' }]);
    await until((s) => s.state === 'failed' && s.restarts >= 1 && s.nextRestartAt === null);
    expect((await fake()).lastError?.message).toMatch(
      /^did not answer initialize within 0\.3 s; gave up/,
    );
  });

  it('a flood of diagnostics ends the server; the edit still comes back by its deadline', async () => {
    const { host, file, fake, until } = await setup(
      'flood',
      { floodBytes: 1024 * 1024, maxFailures: 100 },
      ['200'],
    );
    const main = file('main.fake', 'fine\n');
    await host.start([{ name: 'fake' }]);
    await until((s) => s.state === 'ready');
    await edit(host, main, 'changed\n', 1_000);
    await until((s) => (s.lastError?.message ?? '').includes('(a flood); ended'));
    expect((await fake()).lastError?.message).toBe(
      'sent more than 1.0 MiB within 10 s (a flood); ended',
    );
  });

  it('a stopped server (SIGSTOP) is degraded at the deadline, and ended as hung after hungAfterMs (3 s)', async () => {
    const { host, file, fake, until } = await setup('push', { hungAfterMs: 3_000 });
    const seen: LspServerStatus[] = [];
    host.on((status) => seen.push(status));
    const main = file('main.fake', 'fine\n');
    await host.start([{ name: 'fake' }]);
    await until((s) => s.state === 'ready');
    const { pid } = await fake();
    process.kill(pid!, 'SIGSTOP');
    onTestFinished(() => void (isAlive(pid!) && process.kill(pid!, 'SIGKILL')));
    const outcome = await edit(host, main, 'ERROR\n', 300);
    expect(outcome.outcome).toBe('timeout');
    await until((s) => s.restarts >= 1 && s.state === 'ready' && s.pid !== pid);
    const degraded = seen.find((s) => s.state === 'degraded');
    expect(degraded?.lastError?.message).toMatch(
      /^said nothing for 2\.\d s after a liveness probe \(stopped or stuck\?\)$/,
    );
    const ended = seen.find((s) => s.lastError?.message.includes('hung'));
    expect(ended?.lastError?.message).toBe('answered nothing for 3 s while asked (hung); ended');
    // Started again, it answers as before.
    expect((await edit(host, main, 'fine\nERROR\n')).introduced).toHaveLength(1);
  });

  it('a 10 MB file, a binary one and one of no server are not given to a server; each says why', async () => {
    const { host, file, fake, until } = await setup('push');
    await host.start([{ name: 'fake' }]);
    await until((s) => s.state === 'ready');
    const big = file('big.fake', 'x'.repeat(10 * 1024 * 1024));
    const binary = file('image.fake', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]));
    const other = file('notes.md', 'ERROR\n');
    const outcomes = await host.diagnose(
      { files: [big, binary, other], deadline: Date.now() + 5_000, warnings: false },
      500,
    );
    expect(outcomes.map((o) => [o.file, o.outcome, o.reason])).toEqual([
      ['big.fake', 'skipped', 'big.fake is over the 2.0 MiB a language server is given'],
      ['image.fake', 'skipped', 'image.fake is binary; a language server is given text files only'],
      ['notes.md', 'no-server', undefined],
    ]);
    expect((await fake()).notes.map((n) => n.message)).toEqual([
      'big.fake is over the 2.0 MiB a language server is given',
      'image.fake is binary; a language server is given text files only',
    ]);
  });

  it('the lsp tool is refused files outside the workspace, and says what to do', async () => {
    const { host, base, until } = await setup('push');
    await host.start([{ name: 'fake' }]);
    await until((s) => s.state === 'ready');
    const elsewhere = path.join(base, 'elsewhere.fake');
    writeFileSync(elsewhere, 'ERROR\n');
    await expect(
      host.query({ operation: 'diagnostics', file: elsewhere }, Date.now() + 5_000, 500),
    ).rejects.toThrow('(outside the workspace) elsewhere.fake is not in the workspace');
    await expect(
      host.query({ operation: 'definition', symbol: 'x' }, Date.now() + 5_000, 500),
    ).rejects.toThrow(/no symbol named x in the workspace/);
  });
});
