import path from 'node:path';
import { listExtensions } from '../../main/extensions/handlers.ts';
import { usableExtensions } from '../../main/extensions/load.ts';
import { listTasks, readRuns, taskRunsDir } from '../../main/extensions/task-list.ts';
import { NifflerError } from '../../main/errors.ts';
import { nifflerPaths, tildify } from '../../main/paths.ts';
import type { TaskInfo } from '../../main/protocol.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { formatTable, print, printJson, warn } from '../render/output.ts';

// `niffler task list|show|history`: from the config and the task-runs files alone, no daemon
// (config commands: dist/config.cjs runs them; see launch.ts). `task run` is in tasks.ts.

const find = (tasks: TaskInfo[], name: string): TaskInfo => {
  const task = tasks.find((t) => t.name === name);
  if (task) return task;
  throw new NifflerError(
    'usage',
    `no task named "${name}"; there are: ${tasks.map((t) => t.name).join(', ') || 'none'} (.niffler/tasks/NAME.yaml or $NIFFLER_HOME/tasks/NAME.yaml)`,
  );
};

/** `niffler task list [--json]`: tasks, schedules, next and last runs. */
export const taskList = (options: GlobalOptions): void => {
  const loaded = loadForCommand(options);
  const tasks = listTasks(loaded);
  if (options.json) return printJson(tasks);
  // Files skipped (a bad schedule, say) and an untrusted repository's tasks: said, not hidden.
  const { extensions, ignored } = usableExtensions(loaded);
  for (const problem of listExtensions(extensions, ignored).problems) warn(problem);
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
};

/** `niffler task show NAME [--json]`: the task's definition. */
export const taskShow = (name: string, options: GlobalOptions): void => {
  const task = find(listTasks(loadForCommand(options)), name);
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
};

/** `niffler task history NAME [--json]`: its runs, missed scheduled runs included. */
export const taskHistory = (name: string, options: GlobalOptions): void => {
  const loaded = loadForCommand(options);
  const paths = nifflerPaths(loaded.root);
  const runs = readRuns(path.join(taskRunsDir(paths), 'runs.jsonl'), name);
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
};
