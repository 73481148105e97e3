import path from 'node:path';
import { NifflerError } from '../../main/errors.ts';
import { findWorkspace, nifflerPaths } from '../../main/paths.ts';
import { isAlive, waitUntil } from '../../main/daemon/lifecycle.ts';
import type { GlobalOptions } from '../context.ts';
import { withRunningDaemon } from '../engine.ts';
import { print, printJson } from '../render/output.ts';

export { daemonStatus } from '../fast.ts';

/** `niffler daemon stop`: stops the daemon and every server it started. */
export const daemonStop = (options: GlobalOptions): Promise<void> =>
  withRunningDaemon(options, async (client, root) => {
    if (!client) {
      if (options.json) printJson({ stopped: false, running: false });
      else print(`No daemon runs for ${root}.`);
      return;
    }
    const { pid } = await client.request('daemon/status', {});
    // The daemon may close the connection before its reply arrives: either way it is stopping.
    await client.request('daemon/stop', {}).catch(() => undefined);
    if (!(await waitUntil(() => !isAlive(pid), 20_000)))
      throw new NifflerError(
        'timeout',
        `the daemon (pid ${pid}) did not stop within 20 s; end it with kill ${pid}`,
      );
    if (options.json) printJson({ stopped: true, pid });
    else print(`stopped the daemon (pid ${pid}) and its servers`);
  });

/** `niffler daemon run [--root DIR]`: runs the daemon in the foreground (what the front-end spawns). */
export const daemonRun = async (options: GlobalOptions & { root?: string }): Promise<void> => {
  const root = options.root
    ? path.resolve(options.root)
    : findWorkspace(options.cwd ?? process.cwd()).root;
  const { runDaemon } = await import('../../main/daemon/server.ts');
  await runDaemon({
    root,
    onListening: () =>
      process.stderr.write(
        `niffler daemon for ${root} listening on ${nifflerPaths(root).socket}\n`,
      ),
  });
};
