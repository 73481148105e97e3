import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { print, printJson, warn } from '../render/output.ts';
import { searchTable, sessionsTable } from './status-views.ts';

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

/** `niffler sessions search TEXT [--json]`: sessions holding every word of TEXT. */
export const searchSessions = (
  text: string,
  options: GlobalOptions & { limit?: number },
): Promise<void> =>
  withEngine(options, async (client) => {
    const { hits, problems } = await client.request('session/search', {
      text,
      ...(options.limit ? { limit: options.limit } : {}),
    });
    if (options.json) return printJson({ hits, problems });
    for (const problem of problems) warn(problem);
    if (hits.length === 0) return print(`No session of this workspace mentions "${text}".`);
    print(searchTable(hits));
    print('\nResume one: niffler --resume ID');
  });
