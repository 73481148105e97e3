import { describe, expect, it } from 'vitest';
import { copyBuild, niffler } from './cli.ts';
import { makeE2eWorkspace, publishedServersYaml } from './workspace.ts';

describe('an install path with a space and non-ASCII in it', () => {
  it('starts the daemon and its servers, and stops them', async () => {
    const bin = copyBuild('niffler e2e ünïcode/dist');
    const ws = makeE2eWorkspace();
    ws.writeGlobal(publishedServersYaml(ws.data));
    const run = (args: string[]) => niffler(args, { cwd: ws.repo, env: ws.env, bin });

    const status = await run(['mcp', 'status', '--wait', '--json']);
    expect(status).toMatchObject({ exitCode: 0, stderr: '' });
    expect(JSON.parse(status.stdout).servers.map((s: { state: string }) => s.state)).toEqual([
      'ready',
      'ready',
      'ready',
    ]);
    expect((await run(['daemon', 'stop'])).exitCode).toBe(0);
  });
});
