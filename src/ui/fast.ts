import { requestDaemon } from '../main/daemon/one-shot.ts';
import { mark } from '../workers/shared/timeline.ts';
import { findWorkspace, nifflerPaths } from '../main/paths.ts';
import { showDaemonStatus, showMcpStatus } from './commands/status-views.ts';
import { announceDaemonStart } from './render/output.ts';

// The hot read-only listings, which scripts and status lines call many times a minute. The build
// makes this module one self-contained CommonJS file (dist/fast.cjs), which the bin loads through a
// code cache (see cli.ts), and each command is one round trip to a warm daemon: no command tree, no
// engine, no SDK.

export { reportError } from './render/output.ts';

const client = () => process.argv.slice(2).join(' ');

let typical = true;

/**
 * False once this run went a rare way (starting the daemon, replacing one of another version, or
 * failing): the bin then leaves the code cache to a later run (see CodeCacheOptions.typicalRun).
 */
export const typicalRun = (): boolean => typical;

/** Passes `reply` on, noting a run that went a rare way. */
const noted = async <T extends { fallback: boolean }>(reply: Promise<T>): Promise<T> => {
  try {
    const answer = await reply;
    if (answer.fallback) typical = false;
    return answer;
  } catch (error) {
    typical = false;
    throw error;
  }
};

/** `niffler mcp status [--json] [--wait]`, starting the daemon when none runs. */
export const mcpStatus = async (options: { json: boolean; wait: boolean }): Promise<void> => {
  const { root } = findWorkspace(process.cwd());
  const reply = await noted(
    requestDaemon(
      { root, client: client(), onStarting: announceDaemonStart },
      'mcp/status',
      options.wait ? { wait: true } : {},
    ),
  );
  mark('mcp status answered');
  showMcpStatus(reply.result, options);
};

/** `niffler daemon status [--json]`; never starts a daemon. The command tree's too. */
export const daemonStatus = async (options: { json?: boolean; cwd?: string }): Promise<void> => {
  const { root } = findWorkspace(options.cwd ?? process.cwd());
  const reply = await noted(
    requestDaemon({ root, client: client(), start: false }, 'daemon/status', {}),
  );
  showDaemonStatus(reply.result, { root, socket: nifflerPaths(root).socket }, options);
};
