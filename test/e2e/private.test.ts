import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { httpError } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { makeE2eWorkspace } from './workspace.ts';

const isRoot = process.getuid?.() === 0;
const hasUseradd = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v useradd && command -v userdel'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const canMakeUsers = isRoot && hasUseradd;
const asOther = `another local user${canMakeUsers ? '' : ' — skipped: needs root and useradd to create one'}`;

/** A throwaway local user, removed after the test; runs shell commands as them. */
const otherUser = () => {
  const name = `nfo${process.pid % 100_000}`;
  execFileSync('useradd', ['-M', '-s', '/bin/sh', name]);
  onTestFinished(() => void execFileSync('userdel', [name]));
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const run = (script: string) => execFileSync('su', ['-s', '/bin/sh', name, '-c', script]);
  return { name, uid, run };
};

/** Every file under `dir`, relative, recursively. */
const filesUnder = (dir: string): string[] =>
  existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).sort() : [];

describe.skipIf(!canMakeUsers)(asOther, () => {
  it('cannot get niffler to use a compile cache they planted in the shared temp directory', async () => {
    const ws = makeE2eWorkspace();
    const other = otherUser();
    // The shared temp directory every user may write (as /tmp is: sticky, 1777).
    const shared = path.join(ws.base, 'shared-tmp');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    chmodSync(ws.base, 0o755);
    const planted = path.join(shared, 'node-compile-cache');
    other.run(`mkdir ${planted} && chmod 777 ${planted} && echo planted > ${planted}/entry`);
    ws.env['TMPDIR'] = shared;
    for (const args of [
      ['config', 'path'],
      ['mcp', 'status'],
      ['mcp', 'list'],
    ])
      expect((await ws.run(args)).exitCode).toBe(0);
    // Node's own default would have read and written there; niffler keeps its cache private.
    expect(filesUnder(planted)).toEqual(['entry']);
    expect(filesUnder(path.join(ws.home, 'cache', 'compile')).length).toBeGreaterThan(0);
    expect(statSync(ws.home).mode & 0o777).toBe(0o700);
  });

  it('cannot hand niffler a $NIFFLER_HOME of theirs, nor one anyone may write', async () => {
    const ws = makeE2eWorkspace();
    const other = otherUser();
    chmodSync(ws.base, 0o755);
    const theirs = path.join(ws.base, 'their-home');
    mkdirSync(theirs);
    chownSync(theirs, other.uid, other.uid);
    // A code cache entry planted where niffler's fast path would load it from.
    other.run(`mkdir -p ${theirs}/cache/code && echo planted > ${theirs}/cache/code/fast.cjs.bin`);
    ws.env['NIFFLER_HOME'] = theirs;
    const refused = await ws.run(['mcp', 'status']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toBe(
      `niffler: ${theirs} ($NIFFLER_HOME) belongs to uid ${other.uid}, not to you (uid 0); niffler ` +
        'runs code and trusts files from there. Use a directory of your own: set NIFFLER_HOME, ' +
        'or unset it for ~/.niffler',
    );
    const open = path.join(ws.base, 'open-home');
    mkdirSync(open);
    chmodSync(open, 0o777);
    ws.env['NIFFLER_HOME'] = open;
    const writable = await ws.run(['config', 'path']);
    expect(writable.exitCode).toBe(1);
    expect(writable.stderr).toContain(`may be written by others (mode 0777)`);
    expect(writable.stderr).toContain(`chmod 700 ${open}`);
    expect(filesUnder(open)).toEqual([]);
  });
});

describe('secrets in provider errors', () => {
  it('prints a 401 body that echoes the API key with the key redacted, and logs it so too', async () => {
    const ws = makeE2eWorkspace();
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const key = 'plain-secret-value-4711';
    ws.env['NF_E2E_KEY'] = key;
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n` +
        '    model: fake-model\n    apiKeyEnv: NF_E2E_KEY\n',
    );
    llm.queue(httpError(401, `Incorrect API key provided: ${key}. Also sk-proj-abcdefghijklmnop`));
    const result = await ws.run(['-p', 'hi']);
    expect(result.exitCode).toBe(1);
    const printed = result.stdout + result.stderr;
    expect(printed).toContain(
      'refused the credentials (HTTP 401: Incorrect API key provided: ********.',
    );
    expect(printed).not.toContain(key);
    expect(printed).not.toContain('sk-proj-abcdefghijklmnop');
    const logs = path.join(ws.home, 'logs');
    for (const file of filesUnder(logs).filter((f) => f.endsWith('.log')))
      expect(readFileSync(path.join(logs, file), 'utf8')).not.toContain(key);
  });
});
