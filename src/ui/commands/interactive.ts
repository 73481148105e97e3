import type { GlobalOptions } from '../context.ts';
import { openEngine } from '../engine.ts';
import { findWorkspace } from '../../main/paths.ts';
import { announceDaemonStart, info } from '../render/output.ts';
import { startedEarly } from '../../main/daemon/spawn.ts';
import { mark } from '../../workers/shared/timeline.ts';

export interface InteractiveOptions extends GlobalOptions {
  continue?: boolean;
  resume?: string;
  atTurn?: number;
}

/**
 * `niffler` on a terminal: the interactive session (Ink). Ink and React load only here; the first
 * frame draws before the daemon connection is made, and before MCP servers are ready.
 */
export const interactive = async (options: InteractiveOptions): Promise<void> => {
  // chalk (under Ink and marked-terminal) reads FORCE_COLOR when it loads; it ignores NO_COLOR.
  if (process.env['NO_COLOR']) process.env['FORCE_COLOR'] = '0';
  const [{ runApp }, { deferClient }] = await Promise.all([
    import('../app/run.tsx'),
    import('../app/deferred-client.ts'),
  ]);
  mark('app code loaded');
  const { root, searched } = findWorkspace(options.cwd ?? process.cwd());
  // The daemon connection is made once the first frame is drawn (runApp draws it before it
  // returns). Made while the app's code loaded, its own code's loading held that back, ~45 ms of
  // the first frame, for a session no sooner open: a daemon that was not running was started by
  // the bin already (startDaemonEarly), and the session waits on the daemon, not on this. That
  // start is told above the session's frame, before it is drawn; once Ink draws, nothing else
  // may write to the terminal (a daemon started later shows as the status line's wait).
  if (startedEarly(root)) announceDaemonStart();
  let drawn: () => void = () => {};
  const engine = new Promise<void>((resolve) => (drawn = resolve)).then(() => {
    mark('daemon connection begun');
    return openEngine(options, () => {});
  });
  void engine.then(
    () => mark('daemon connected'),
    () => {},
  );
  // Awaited below; a failure is reported there, not as an unhandled rejection.
  engine.catch(() => {});
  let sessionId: string;
  try {
    const running = runApp({
      client: deferClient(engine.then((e) => e.client)),
      root,
      cwd: searched[0] ?? root,
      session: {
        ...(options.resume ? { resume: options.resume } : {}),
        ...(options.atTurn !== undefined ? { atTurn: options.atTurn } : {}),
        ...(options.continue ? { continue: true } : {}),
      },
      ...(options.model ? { model: options.model } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      ...(options.yes ? { yes: true } : {}),
    });
    drawn();
    sessionId = await running;
  } finally {
    drawn();
    await (await engine.catch(() => null))?.close();
  }
  if (sessionId) info(`session ${sessionId} · resume it with niffler -r ${sessionId}`);
};
