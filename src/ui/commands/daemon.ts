import path from 'node:path';
import type { EngineClient } from '../../main/daemon/client.ts';
import { isUnresponsive } from '../../main/daemon/deadline.ts';
import { NifflerError } from '../../main/errors.ts';
import { findWorkspace, nifflerPaths } from '../../main/paths.ts';
import type { GlobalOptions } from '../context.ts';
import { print, printJson } from '../render/output.ts';

export { daemonStatus } from '../fast.ts';

/** How a daemon was ended: asked to stop, or killed (it did not answer, or did not go). */
interface Ended {
  pid: number;
  how: 'stopped' | 'killed';
}

const connect = async (root: string, start: boolean): Promise<EngineClient | null> => {
  const { connectDaemon } = await import('../../main/daemon/lifecycle.ts');
  return connectDaemon({ root, start, client: process.argv.slice(2).join(' ') });
};

/**
 * Ends the daemon of `root`: asks it to stop and waits; with `force`, kills it (and its servers)
 * when it does not answer or does not go within 5 s. Null when no daemon runs.
 */
const endDaemon = async (root: string, force: boolean): Promise<Ended | null> => {
  const { isAlive, killDaemon, waitUntil } = await import('../../main/daemon/lifecycle.ts');
  const kill = async (): Promise<Ended | null> => {
    const pid = await killDaemon(nifflerPaths(root));
    return pid === null ? null : { pid, how: 'killed' };
  };
  let client: EngineClient | null;
  try {
    client = await connect(root, false);
  } catch (error) {
    if (force && isUnresponsive(error)) return kill();
    throw error;
  }
  // No socket answers; a daemon whose socket was deleted may still hold the workspace.
  if (!client) return force ? kill() : null;
  let pid: number;
  try {
    ({ pid } = await client.request('daemon/status', {}));
    // The daemon may close the connection before its reply arrives: either way it is stopping.
    await client.request('daemon/stop', {}).catch(() => undefined);
  } finally {
    client.close();
  }
  if (await waitUntil(() => !isAlive(pid), force ? 5_000 : 20_000)) return { pid, how: 'stopped' };
  if (force) return kill();
  throw new NifflerError(
    'timeout',
    `the daemon (pid ${pid}) did not stop within 20 s; end it with niffler daemon stop --force`,
  );
};

const describe = (ended: Ended): string =>
  ended.how === 'stopped'
    ? `stopped the daemon (pid ${ended.pid}) and its servers`
    : `killed the daemon (pid ${ended.pid}), which did not respond, and ended its servers`;

/** `niffler daemon stop [--force]`: stops the daemon and every server it started. */
export const daemonStop = async (options: GlobalOptions & { force?: boolean }): Promise<void> => {
  const { root } = findWorkspace(options.cwd ?? process.cwd());
  const ended = await endDaemon(root, options.force === true);
  if (options.json)
    printJson(ended ? { stopped: true, ...ended } : { stopped: false, running: false });
  else print(ended ? describe(ended) : `No daemon runs for ${root}.`);
};

/**
 * `niffler daemon restart`: ends the daemon (killing it if it does not respond) and starts a new
 * one, which starts its servers afresh.
 */
export const daemonRestart = async (options: GlobalOptions): Promise<void> => {
  const { root } = findWorkspace(options.cwd ?? process.cwd());
  const ended = await endDaemon(root, true);
  const client = await connect(root, true);
  let pid: number;
  try {
    ({ pid } = await client!.request('daemon/status', {}));
  } finally {
    client?.close();
  }
  if (options.json) printJson({ restarted: true, pid, previous: ended });
  else print(`${ended ? `${describe(ended)}; ` : ''}started the daemon (pid ${pid})`);
};

/** `niffler daemon run [--root DIR]`: runs the daemon in the foreground (what the front-end spawns). */
export const daemonRun = async (options: GlobalOptions & { root?: string }): Promise<void> => {
  const root = options.root
    ? path.resolve(options.root)
    : findWorkspace(options.cwd ?? process.cwd()).root;
  const { runDaemon } = await import('../../main/daemon/server.ts');
  let busy: number | null | undefined;
  await runDaemon({
    root,
    onListening: () =>
      process.stderr.write(
        `niffler daemon for ${root} listening on ${nifflerPaths(root).socket}\n`,
      ),
    onBusy: (holder) => (busy = holder),
  });
  if (busy !== undefined)
    throw new NifflerError(
      'usage',
      `a niffler daemon${busy ? ` (pid ${busy})` : ''} already runs for ${root}; stop it first (niffler daemon stop)`,
    );
};
