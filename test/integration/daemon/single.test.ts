import {
  lstatSync,
  readFileSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectSocket } from '../../../src/main/daemon/client.ts';
import { waitUntil } from '../../../src/main/daemon/lifecycle.ts';
import { runDaemon } from '../../../src/main/daemon/server.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { testEnv } from '../../fixtures/env.ts';

const workspace = () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-s-')));
  const root = path.join(base, 'repo');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const env = testEnv({ HOME: base, NIFFLER_HOME: path.join(base, 'h') });
  return { root, env, paths: nifflerPaths(root, env) };
};

/** Runs a daemon in this process; resolves once it listens, with the promise of its end. */
const startDaemon = async (ws: ReturnType<typeof workspace>) => {
  let listening: () => void = () => {};
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const running = runDaemon({ root: ws.root, env: ws.env, onListening: () => listening() });
  await Promise.race([ready, running]);
  const stop = async () => {
    const client = await connectSocket(ws.paths.socket).catch(() => null);
    await client?.request('daemon/stop', {}).catch(() => undefined);
    client?.close();
    await running;
  };
  onTestFinished(stop);
  return { running, stop };
};

const answers = async (socket: string) => {
  const client = await connectSocket(socket).catch(() => null);
  if (!client) return false;
  try {
    return (await client.request('daemon/status', {})).pid === process.pid;
  } finally {
    client.close();
  }
};

describe('one daemon per workspace', () => {
  it('a second daemon for the workspace returns at once, naming the one that runs', async () => {
    const ws = workspace();
    await startDaemon(ws);
    let busy: number | null | undefined;
    let listened = false;
    await runDaemon({
      root: ws.root,
      env: ws.env,
      onBusy: (holder) => (busy = holder),
      onListening: () => (listened = true),
    });
    expect({ busy, listened }).toEqual({ busy: process.pid, listened: false });
    expect(await answers(ws.paths.socket)).toBe(true);
  });

  it('makes its socket again when it is deleted, and at the end removes only its own', async () => {
    const ws = workspace();
    const { stop } = await startDaemon(ws);
    const first = lstatSync(ws.paths.socket).ino;
    rmSync(ws.paths.socket);
    expect(await waitUntil(() => answers(ws.paths.socket), 10_000)).toBe(true);
    expect(lstatSync(ws.paths.socket).ino).not.toBe(first);

    // Someone puts a file of their own there: the daemon leaves (it cannot serve there) and
    // leaves that file alone.
    writeFileSync(`${ws.paths.socket}.new`, 'not yours');
    renameSync(`${ws.paths.socket}.new`, ws.paths.socket);
    await stop();
    expect(lstatSync(ws.paths.socket).isFile()).toBe(true);
  });

  it.each([
    ['removed', 'is gone', (root: string) => rmSync(root, { recursive: true, force: true })],
    [
      'removed and made again',
      'was replaced by another directory',
      (root: string) => {
        renameSync(root, `${root}.old`);
        mkdirSync(path.join(root, '.git'), { recursive: true });
      },
    ],
  ])('stops once its repository is %s, and says why in its log', async (_, why, change) => {
    const ws = workspace();
    const { running } = await startDaemon(ws);
    change(ws.root);
    // It looks every 2 s; bounded, so a daemon that never notices fails the test.
    const ended = await Promise.race([
      running.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20_000).unref()),
    ]);
    expect(ended).toBe(true);
    const log = readFileSync(ws.paths.daemonLog, 'utf8');
    expect(log).toContain(`"reason":"the repository ${ws.root} ${why}"`);
  });
});
