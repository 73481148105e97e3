import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { print, printJson } from '../render/output.ts';
import { sessionsTable } from './status-views.ts';

/** `niffler sessions [--json]`: this workspace's sessions, newest first. */
export const sessions = (options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const list = await client.request('session/list', {});
    if (options.json) {
      printJson(list);
      return;
    }
    if (list.length === 0) {
      print('No sessions in this workspace yet. Start one: niffler, or niffler -p "…"');
      return;
    }
    print(sessionsTable(list));
    print('\nResume one: niffler --resume ID (or --continue for the latest)');
  });
