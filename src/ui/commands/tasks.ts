import { NifflerError } from '../../main/errors.ts';
import { tildify } from '../../main/paths.ts';
import type { TaskInfo } from '../../main/protocol.ts';
import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { formatTable, print, printJson, warn } from '../render/output.ts';
import { exitCodeForOutcome } from '../render/turn.ts';

type TaskOptions = GlobalOptions & { input?: string[] };

const find = (tasks: TaskInfo[], name: string): TaskInfo => {
  const task = tasks.find((t) => t.name === name);
  if (task) return task;
  throw new NifflerError(
    'usage',
    `no task named "${name}"; there are: ${tasks.map((t) => t.name).join(', ') || 'none'} (.niffler/tasks/NAME.yaml or $NIFFLER_HOME/tasks/NAME.yaml)`,
  );
};

const inputsOf = (pairs: string[] = []): Record<string, string> =>
  Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new NifflerError('usage', `--input expects name=value, got "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );

/** `niffler task list [--json]`: tasks, schedules, next and last runs. */
export const taskList = (options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const tasks = await client.request('task/list', {});
    if (options.json) return printJson(tasks);
    // Files skipped (a bad schedule, say) and an untrusted repository's tasks: said, not hidden.
    const { problems } = await client.request('extensions/list', {});
    for (const problem of problems) warn(problem);
    if (tasks.length === 0)
      return print('No tasks. Write one in .niffler/tasks/NAME.yaml (see the README: Tasks).');
    print(
      formatTable(
        ['NAME', 'SCHEDULE', 'NEXT', 'LAST RUN', 'SOURCE', 'DESCRIPTION'],
        tasks.map((t) => [
          t.name,
          t.schedule ?? '-',
          t.next ?? '-',
          t.lastRun ? `${t.lastRun.outcome} ${t.lastRun.endedAt}` : '-',
          t.source,
          t.description,
        ]),
      ),
    );
    for (const t of tasks)
      if (t.missed)
        warn(`${t.name}: ${t.missed} scheduled run(s) missed while no daemon ran; not run now`);
  });

/** `niffler task show NAME [--json]`: the task's definition. */
export const taskShow = (name: string, options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const task = find(await client.request('task/list', {}), name);
    if (options.json) return printJson(task);
    const rows: [string, string][] = [
      ['file', tildify(task.file)],
      ['agent', task.agent ?? '(the default)'],
      ['model', task.model ?? '(the default)'],
      ['schedule', task.schedule ? `${task.schedule} (next ${task.next ?? '-'})` : '(by hand)'],
      ...Object.entries(task.inputs).map(([k, v]): [string, string] => [
        `input ${k}`,
        `${v.description ?? ''}${v.default !== undefined ? ` (default ${String(v.default)})` : ''}${v.required ? ' (required)' : ''}`,
      ]),
    ];
    print(`${task.name}: ${task.description}`);
    for (const [k, v] of rows) print(`  ${k.padEnd(12)} ${v}`);
    print(`\n${task.prompt ?? task.command ?? ''}`);
  });

/** `niffler task history NAME [--json]`: its runs, missed scheduled runs included. */
export const taskHistory = (name: string, options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const runs = await client.request('task/history', { name });
    if (options.json) return printJson(runs);
    if (runs.length === 0) return print(`${name} has not run yet (niffler task run ${name})`);
    print(
      formatTable(
        ['STARTED', 'TRIGGER', 'OUTCOME', 'SESSION', 'NOTE'],
        runs.map((r) => [
          r.startedAt,
          r.trigger,
          r.outcome,
          r.sessionId ?? '-',
          r.missed
            ? `${r.missed} run(s) due until ${r.endedAt} were missed (no daemon ran)`
            : [r.denied?.length ? `denied: ${r.denied.join(', ')}` : '', r.error ?? '']
                .filter(Boolean)
                .join('; '),
        ]),
      ),
    );
  });

/** `niffler task run NAME [--input k=v]…`: runs it now in the daemon; prints its answer. */
export const taskRun = (name: string, options: TaskOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const { sessionId, summary } = await client.request('task/run', {
      name,
      inputs: inputsOf(options.input),
    });
    process.exitCode = exitCodeForOutcome(summary);
    if (options.json) return printJson({ sessionId, ...summary });
    print(summary.text || `(no answer: ${summary.outcome})`);
    if (summary.denied.length)
      warn(`denied (a task never asks; allow them in tools.policy): ${summary.denied.join(', ')}`);
    if (summary.error) warn(summary.error);
    warn(`session ${sessionId}: niffler --resume ${sessionId}`);
  });
