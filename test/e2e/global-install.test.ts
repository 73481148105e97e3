import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { testEnv } from '../fixtures/env.ts';
import { serverBin } from './workspace.ts';

/** A Node older than 22 on this machine, outside node_modules (the system's), if there is one. */
const oldNode = (): string | undefined =>
  ['/usr/bin/node', '/usr/local/bin/node'].find((bin) => {
    if (!existsSync(bin)) return false;
    const version = execFileSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    return Number(version.split('.')[0]) < 22;
  });

/**
 * The global-install path a user takes to have `niffler` in every repository: `npm pack`, then
 * `npm install -g` of the tarball into a scratch prefix, then the installed bin run from another
 * repository with Node 22 first on PATH.
 */
describe('installed from the packed tarball (npm install -g)', () => {
  it('answers --version, mcp list and -p against the fake model from another repository', async () => {
    const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-g-')));
    onTestFinished(() => rmSync(base, { recursive: true, force: true }));
    const prefix = path.join(base, 'prefix');
    const packed = await execa(
      'npm',
      ['pack', '--ignore-scripts', '--silent', '--pack-destination', base],
      { cwd: process.cwd() },
    );
    const tarball = path.join(base, packed.stdout.trim().split('\n').at(-1)!);
    await execa(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        tarball,
      ],
      { cwd: base },
    );
    const bin = path.join(prefix, 'bin');
    expect(readdirSync(bin)).toContain('niffler');

    // Another repository, a fresh HOME: nothing of this checkout is in reach.
    const home = path.join(base, 'home');
    const repo = path.join(base, 'other-repo');
    mkdirSync(path.join(repo, '.git'), { recursive: true });
    mkdirSync(path.join(home, '.niffler'), { recursive: true });
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    writeFileSync(
      path.join(home, '.niffler', 'config.yaml'),
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: m\n` +
        `mcpServers:\n  memory:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-memory'))}]\n`,
    );
    const node22 = path.dirname(process.execPath);
    const env = testEnv({
      HOME: home,
      PATH: [node22, bin, '/usr/bin', '/bin'].join(path.delimiter),
      NO_COLOR: '1',
    });
    delete env['NIFFLER_HOME'];
    const run = (args: string[], pathFirst?: string) =>
      execa('niffler', args, {
        cwd: repo,
        env: pathFirst ? { ...env, PATH: `${pathFirst}${path.delimiter}${env['PATH']}` } : env,
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
      });
    onTestFinished(async () => void (await run(['daemon', 'stop'])));

    const version = await run(['--version']);
    expect(version).toMatchObject({ exitCode: 0, stdout: '0.1.0', stderr: '' });

    const list = await run(['mcp', 'list', '--json']);
    expect(list.exitCode).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject([{ name: 'memory', trust: 'yours' }]);

    llm.queue(reply().text('installed and answering'));
    const answer = await run(['-p', 'hello']);
    expect(answer).toMatchObject({ exitCode: 0, stdout: 'installed and answering' });

    // With an older Node first on PATH, one line says what to do.
    const old = oldNode();
    if (old) {
      const refused = await run(['--version'], path.dirname(old));
      expect(refused.exitCode).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(
        /^niffler: needs Node\.js 22\.3 or newer, and \S+ is v\d+\.[^\n]*PATH$/,
      );
    }
  }, 240_000);
});
