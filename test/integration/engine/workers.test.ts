import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { exitCause, startWorker } from '../../../src/main/threads/entry.ts';
import { testEnv } from '../../fixtures/env.ts';
import { serverBin } from '../../fixtures/mcp/servers.ts';

describe('worker threads', () => {
  it('a worker that dies says why, not only its exit code', async () => {
    const worker = startWorker('api', undefined, { execArgv: ['--import', 'no-such-module-niffler'] });
    // (events.once would reject on the 'error' event that comes first.)
    const code = await new Promise<number>((resolve) => worker.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(exitCause(worker)).toMatch(/^: Cannot find (package|module) 'no-such-module-niffler'/);
  });

  it('running from source works from any directory (tsx is found from niffler, not the cwd)', async () => {
    const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-src-')));
    onTestFinished(() => rmSync(base, { recursive: true, force: true }));
    writeFileSync(
      path.join(base, 'config.yaml'),
      `mcpServers:\n  e:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]\n`,
    );
    const result = await execa(
      process.execPath,
      [
        '--import',
        import.meta.resolve('tsx'),
        path.resolve('src/ui/cli.ts'),
        '--no-daemon',
        'mcp',
        'tools',
        'e',
      ],
      {
        cwd: base,
        env: testEnv({ HOME: base, NIFFLER_HOME: base }),
        extendEnv: false,
        reject: false,
      },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('e__echo');
  }, 60_000);
});
