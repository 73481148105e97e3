import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { findWorkspace } from '../../main/paths.ts';
import { contextText } from '../render/context.ts';
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

/**
 * `niffler sessions show [ID] [--context] [--json]`: a session (the latest by default) and what its
 * next request weighs; with `--context`, that request part by part (what `/context` shows).
 */
export const showSession = (
  id: string | undefined,
  options: GlobalOptions & { context?: boolean },
): Promise<void> =>
  withEngine(options, async (client) => {
    const report = await client.request('session/context', {
      ...(id ? { sessionId: id } : {}),
      ...(options.model ? { model: options.model } : {}),
      cwd: findWorkspace(options.cwd ?? process.cwd()).searched[0]!,
    });
    const session = (await client.request('session/list', {})).find(
      (s) => s.id === report.sessionId,
    );
    if (options.json) return printJson({ session, context: report });
    if (options.context) return print(contextText(report));
    const n = (tokens: number) => tokens.toLocaleString('en-US');
    print(
      [
        `session   ${report.sessionId}`,
        ...(session
          ? [
              `title     ${session.title}`,
              `updated   ${session.updatedAt.replace('T', ' ').slice(0, 19)}`,
              `messages  ${session.messages}`,
            ]
          : []),
        `model     ${report.model} (agent ${report.agent})`,
        `context   the next request weighs about ${n(report.total)} of ${n(report.window)} tokens; ` +
          `${report.compactions.length} compaction(s) made, ${report.clearedOutputs.length} output(s) cleared`,
        '',
        `Part by part: niffler sessions show ${report.sessionId} --context. Resume it: niffler --resume ${report.sessionId}`,
      ].join('\n'),
    );
  });
