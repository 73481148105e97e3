import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { findWorkspace } from '../../main/paths.ts';
import { info } from '../render/output.ts';

export interface InteractiveOptions extends GlobalOptions {
  continue?: boolean;
  resume?: string;
}

/**
 * `niffler` on a terminal: the interactive session (Ink). Ink and React load only here, while the
 * daemon connection is being made, and the first frame draws before MCP servers are ready.
 */
export const interactive = async (options: InteractiveOptions): Promise<void> => {
  // chalk (under Ink and marked-terminal) reads FORCE_COLOR when it loads; it ignores NO_COLOR.
  if (process.env['NO_COLOR']) process.env['FORCE_COLOR'] = '0';
  const app = import('../app/run.tsx');
  app.catch(() => {}); // awaited below; a load failure is reported there
  const { root } = findWorkspace(options.cwd ?? process.cwd());
  const sessionId = await withEngine(options, async (client) =>
    (await app).runApp({
      client,
      root,
      session: {
        ...(options.resume ? { resume: options.resume } : {}),
        ...(options.continue ? { continue: true } : {}),
      },
      ...(options.model ? { model: options.model } : {}),
      ...(options.yes ? { yes: true } : {}),
    }),
  );
  if (sessionId) info(`session ${sessionId} · resume it with niffler -r ${sessionId}`);
};
