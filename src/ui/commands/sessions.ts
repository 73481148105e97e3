import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { formatTable, print, printJson } from '../render/output.ts';

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
    print(
      formatTable(
        ['ID', 'UPDATED', 'MESSAGES', 'TITLE'],
        list.map((s) => [
          s.id,
          s.updatedAt.replace('T', ' ').slice(0, 16),
          String(s.messages),
          s.title,
        ]),
      ),
    );
    print('\nResume one: niffler --resume ID (or --continue for the latest)');
  });
