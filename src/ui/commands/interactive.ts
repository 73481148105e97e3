import type { GlobalOptions } from '../context.ts';
import { openEngine } from '../engine.ts';
import { findWorkspace } from '../../main/paths.ts';
import { info } from '../render/output.ts';
import { mark } from '../../workers/shared/timeline.ts';

export interface InteractiveOptions extends GlobalOptions {
  continue?: boolean;
  resume?: string;
  atTurn?: number;
}

/**
 * `niffler` on a terminal: the interactive session (Ink). Ink and React load only here; the first
 * frame draws while the daemon connection is still being made, and before MCP servers are ready.
 */
export const interactive = async (options: InteractiveOptions): Promise<void> => {
  // chalk (under Ink and marked-terminal) reads FORCE_COLOR when it loads; it ignores NO_COLOR.
  if (process.env['NO_COLOR']) process.env['FORCE_COLOR'] = '0';
  const app = import('../app/run.tsx');
  const engine = openEngine(options);
  void engine.then(() => mark('daemon connected'), () => {});
  // Both are awaited below; a failure is reported there, not as an unhandled rejection.
  app.catch(() => {});
  engine.catch(() => {});
  const [{ runApp }, { deferClient }] = await Promise.all([
    app,
    import('../app/deferred-client.ts'),
  ]);
  mark('app code loaded');
  const { root, searched } = findWorkspace(options.cwd ?? process.cwd());
  let sessionId: string;
  try {
    sessionId = await runApp({
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
  } finally {
    await (await engine.catch(() => null))?.close();
  }
  if (sessionId) info(`session ${sessionId} · resume it with niffler -r ${sessionId}`);
};
