import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyBuild, niffler } from './cli.ts';
import { makeE2eWorkspace, publishedServersYaml } from './workspace.ts';

/** package.json's version as the bundles carry it (minified or not). */
const stampedVersion = () => /version: ?"0\.1\.0"/;

/** A copy of the build that says it is another version. */
const otherVersionBuild = (version: string): string => {
  const bin = copyBuild('niffler-e2e-other-version');
  const copy = path.dirname(bin);
  // Every bundle that carries the version: the chunks of the command tree and the fast path.
  const stamped = readdirSync(copy, { recursive: true, encoding: 'utf8' })
    .map((file) => path.join(copy, file))
    .filter((file) => /\.c?js$/.test(file) && stampedVersion().test(readFileSync(file, 'utf8')));
  for (const file of stamped)
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(stampedVersion(), `version:${JSON.stringify(version)}`),
    );
  expect(stamped.length).toBeGreaterThan(0);
  return bin;
};

describe('a front-end of another version', () => {
  it('makes the running daemon exit and starts one of its own version; servers come back', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(publishedServersYaml(ws.data));
    await ws.runJson(['mcp', 'status', '--wait']);
    const old = await ws.runJson<{ pid: number; version: string }>(['daemon', 'status']);

    const other = otherVersionBuild('0.1.0-other');
    const run = (args: string[]) => niffler(args, { cwd: ws.repo, env: ws.env, bin: other });
    const status = await run(['mcp', 'status', '--wait', '--json']);
    expect(status.exitCode).toBe(0);
    expect(JSON.parse(status.stdout).servers.map((s: { state: string }) => s.state)).toEqual([
      'ready',
      'ready',
      'ready',
    ]);
    const fresh = JSON.parse((await run(['daemon', 'status', '--json'])).stdout) as {
      pid: number;
      version: string;
    };
    expect(fresh.version).toBe('0.1.0-other');
    expect(fresh.pid).not.toBe(old.pid);
    await run(['daemon', 'stop']);
  });
});
