import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../src/main/daemon/lifecycle.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import { copyBuild, niffler } from './cli.ts';
import { makeE2eWorkspace } from './workspace.ts';

// The bin loads dist/fast.cjs through a V8 code cache it writes after a run (src/main/code-cache.ts).
// `niffler daemon status --json` in a workspace with no daemon takes that path and never starts one.
describe('the code cache of the fast path', () => {
  it('is written once, reused, and never serves code of a bundle that changed', async () => {
    const ws = makeE2eWorkspace();
    // A copy of the build, so this test can change the fast path's bundle.
    const bin = copyBuild('niffler-e2e-code-cache');
    const status = async () => {
      const result = await niffler(['daemon', 'status', '--json'], {
        cwd: ws.repo,
        env: ws.env,
        bin,
      });
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(0);
      return JSON.parse(result.stdout) as { running: unknown };
    };
    const cacheDir = path.join(ws.home, 'cache', 'code');

    expect((await status()).running).toBe(false);
    const [cacheName, ...others] = readdirSync(cacheDir);
    expect(others).toEqual([]);
    expect(cacheName).toMatch(/^fast\.cjs-[0-9a-f]{12}\.bin$/);
    const cacheFile = path.join(cacheDir, cacheName!);
    expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
    const written = readFileSync(cacheFile);
    expect(written.toString('utf8', 0, written.indexOf(10))).toMatch(
      new RegExp(`^${process.version.replaceAll('.', '\\.')} [0-9a-f]{16} \\d+ \\d+ [\\d.]+$`),
    );

    // Accepted as it is: not written again.
    expect((await status()).running).toBe(false);
    expect(readFileSync(cacheFile).equals(written)).toBe(true);

    // The same length of source with other code in it: V8's own check (which looks at the length)
    // would take the old code; the key (inode, size, modification time) does not.
    const fast = path.join(path.dirname(bin), 'fast.cjs');
    const source = readFileSync(fast, 'utf8');
    // (The bundle may be minified: `running:false,`; the replacement keeps its length either way.)
    const running = /running:( ?)false,/;
    expect(source).toMatch(running);
    writeFileSync(fast, source.replace(running, 'running:$112345,'));
    expect((await status()).running).toBe(12345);
    const rewritten = readFileSync(cacheFile);
    expect(rewritten.equals(written)).toBe(false);

    // Damaged data under the right key: V8 rejects it, the command still works, the file is mended.
    const header = rewritten.subarray(0, rewritten.indexOf(10) + 1);
    writeFileSync(cacheFile, Buffer.concat([header, Buffer.from('not a code cache')]));
    expect((await status()).running).toBe(12345);
    expect(readFileSync(cacheFile).length).toBeGreaterThan(header.length + 1000);
    expect(readdirSync(cacheDir)).toEqual([cacheName]);
  });

  it('is made from a warm run, not from the run that started the daemon', async () => {
    const ws = makeE2eWorkspace();
    const cacheDir = path.join(ws.home, 'cache', 'code');
    const status = async () => {
      const result = await ws.run(['mcp', 'status', '--json']);
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ servers: [] });
    };
    // The first run starts the daemon, through code no warm run calls (the JSON-RPC library, the
    // start-up lock, spawning): a cache made from it would be loaded, whole, by every later run.
    // (The daemon's own bundle has its own cache there: see below.)
    const fastCaches = () =>
      (existsSync(cacheDir) ? readdirSync(cacheDir) : []).filter((n) => n.startsWith('fast.'));
    await status();
    expect(fastCaches()).toEqual([]);
    await status();
    const [cacheName, ...others] = fastCaches();
    expect(others).toEqual([]);
    expect(cacheName).toMatch(/^fast\.cjs-[0-9a-f]{12}\.bin$/);
  });
});

// The daemon loads dist/daemon-body.cjs through the same kind of cache (src/main/daemon/main.ts),
// written once the daemon has warmed (its start and first answers compiled), not at exit: a daemon
// is stopped by kill -9 as often as not.
describe("the code cache of the daemon's bundle", () => {
  it('is written once the daemon is warm, reused by the next daemon, and made again for a changed bundle', async () => {
    const ws = makeE2eWorkspace();
    const bin = copyBuild('niffler-e2e-daemon-code-cache');
    const run = (args: string[]) => niffler(args, { cwd: ws.repo, env: ws.env, bin });
    const cacheDir = path.join(ws.home, 'cache', 'code');
    const cacheFiles = () =>
      (existsSync(cacheDir) ? readdirSync(cacheDir) : []).filter((n) => n.startsWith('daemon-'));
    const logFile = nifflerPaths(ws.repo, ws.env).daemonLog;
    // `warmed;` (daemon/settle.ts) follows the daemon's warming, when the cache is written.
    const warmedDaemons = () =>
      existsSync(logFile) ? readFileSync(logFile, 'utf8').split('"msg":"warmed;').length - 1 : 0;
    const startAndWarm = async (times: number) => {
      const status = await run(['mcp', 'status', '--json']);
      expect(status.stderr).toBe('');
      expect(JSON.parse(status.stdout)).toMatchObject({ servers: [] });
      expect(await waitUntil(() => warmedDaemons() === times, 30_000)).toBe(true);
    };

    await startAndWarm(1);
    const [cacheName, ...others] = cacheFiles();
    expect(others).toEqual([]);
    expect(cacheName).toMatch(/^daemon-body\.cjs-[0-9a-f]{12}\.bin$/);
    const cacheFile = path.join(cacheDir, cacheName!);
    expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
    const written = readFileSync(cacheFile);
    expect(written.toString('utf8', 0, written.indexOf(10))).toMatch(
      new RegExp(`^${process.version.replaceAll('.', '\\.')} [0-9a-f]{16} \\d+ \\d+ [\\d.]+$`),
    );
    expect(written.length).toBeGreaterThan(100_000);

    // The next daemon takes it as it is: not written again.
    expect((await run(['daemon', 'stop'])).exitCode).toBe(0);
    await startAndWarm(2);
    expect(readFileSync(cacheFile).equals(written)).toBe(true);

    // A changed bundle misses, serves, and writes its own.
    expect((await run(['daemon', 'stop'])).exitCode).toBe(0);
    const body = path.join(path.dirname(bin), 'daemon-body.cjs');
    writeFileSync(body, `${readFileSync(body, 'utf8')}\n// changed\n`);
    await startAndWarm(3);
    expect(cacheFiles()).toEqual([cacheName]);
    expect(readFileSync(cacheFile).equals(written)).toBe(false);
    expect((await run(['daemon', 'stop'])).exitCode).toBe(0);
  });

  it('is written at the stop of a daemon stopped before it warmed', async () => {
    const ws = makeE2eWorkspace();
    // A server that never answers: the daemon's warming waits for its servers (up to 10 s).
    ws.writeGlobal(
      `mcpServers:\n  mute:\n    command: ${JSON.stringify(process.execPath)}\n    args: ['-e', 'setInterval(() => {}, 1e6)']\n`,
    );
    const cacheDir = path.join(ws.home, 'cache', 'code');
    const status = await ws.run(['mcp', 'status', '--json']);
    expect(status.exitCode).toBe(0);
    expect(
      existsSync(cacheDir) ? readdirSync(cacheDir).filter((n) => n.startsWith('daemon-')) : [],
    ).toEqual([]);
    expect((await ws.run(['daemon', 'stop'])).exitCode).toBe(0);
    const log = readFileSync(nifflerPaths(ws.repo, ws.env).daemonLog, 'utf8');
    expect(log).not.toContain('"msg":"warmed;');
    expect(readdirSync(cacheDir).filter((n) => n.startsWith('daemon-'))).toHaveLength(1);
  });
});
