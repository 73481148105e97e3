import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI } from './cli.ts';
import { makeE2eWorkspace, publishedServersYaml } from './workspace.ts';

describe('an install path with a space and non-ASCII in it', () => {
  it('starts the daemon and its servers, and stops them', async () => {
    // Inside the project, so the build's external packages still resolve from node_modules.
    const dist = path.resolve('node_modules/.cache/niffler e2e ünïcode/dist');
    rmSync(path.dirname(dist), { recursive: true, force: true });
    cpSync(path.dirname(CLI), dist, { recursive: true });
    onTestFinished(() => rmSync(path.dirname(dist), { recursive: true, force: true }));
    const ws = makeE2eWorkspace();
    ws.writeGlobal(publishedServersYaml(ws.data));
    const run = (args: string[]) =>
      execa(process.execPath, [path.join(dist, 'cli.cjs'), ...args], {
        cwd: ws.repo,
        env: ws.env,
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      });

    const status = await run(['mcp', 'status', '--wait', '--json']);
    expect(status).toMatchObject({ exitCode: 0, stderr: '' });
    expect(
      JSON.parse(String(status.stdout)).servers.map((s: { state: string }) => s.state),
    ).toEqual(['ready', 'ready', 'ready']);
    expect((await run(['daemon', 'stop'])).exitCode).toBe(0);
  });
});
