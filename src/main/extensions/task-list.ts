import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readPidFile } from '../../workers/shared/pid-file.ts';
import { Cron } from 'croner';
import type { LoadedConfig } from './workspace-config.ts';
import { nifflerPaths, type Env } from '../paths.ts';
import type { TaskInfo, TaskRun } from '../protocol.ts';
import { usableExtensions } from './load.ts';
import type { TaskDefinition } from './tasks.ts';

// What the task listings show (`task list|show|history`), read from the config and the task-runs
// files alone: the same answer a daemon gives (TaskRunner), without one — a listing is a config
// command (launch.ts), loading none of the engine.

/** Runs of one task kept in its history listing. */
const HISTORY = 50;

/** `$NIFFLER_HOME/task-runs/<workspace-key>`: the runs (`runs.jsonl`) and what was watched. */
export const taskRunsDir = (paths: { home: string; key: string }): string =>
  path.join(paths.home, 'task-runs', paths.key);

/** The runs of `name` in `runsFile` (missed ones included), oldest first, the last 50. */
export const readRuns = (runsFile: string, name: string): TaskRun[] => {
  let text: string;
  try {
    text = readFileSync(runsFile, 'utf8');
  } catch {
    return []; // No run yet.
  }
  return text
    .split('\n')
    .flatMap((line) => {
      try {
        const run = JSON.parse(line) as TaskRun;
        return run.task === name ? [run] : [];
      } catch {
        return []; // A torn last line.
      }
    })
    .slice(-HISTORY);
};

/** How `task` shows in a listing, with its next run and runs missed as its watcher knows them. */
export const taskInfo = (
  task: TaskDefinition,
  runsFile: string,
  watch: { next?: Date | null; missed?: number },
): TaskInfo => {
  const last = readRuns(runsFile, task.name).at(-1);
  return {
    name: task.name,
    description: task.description,
    source: task.source,
    file: task.file,
    ...(task.prompt ? { prompt: task.prompt } : {}),
    ...(task.command ? { command: task.command } : {}),
    ...(task.agent ? { agent: task.agent } : {}),
    ...(task.model ? { model: task.model } : {}),
    inputs: task.inputs,
    ...(task.schedule ? { schedule: task.schedule } : {}),
    ...(watch.next ? { next: watch.next.toISOString() } : {}),
    ...(last ? { lastRun: last } : {}),
    ...(watch.missed ? { missed: watch.missed } : {}),
  };
};

/** The scheduled runs of `schedule` due after `since` and by `now`. */
export const dueRuns = (schedule: string, since: Date, now: Date): Date[] =>
  new Cron(schedule, { paused: true }).nextRuns(1000, since).filter((d) => d <= now);

/** Until when a daemon last watched the schedules (`watched.json`), if one ever did. */
export const watchedUntil = (dir: string): Date | undefined => {
  try {
    const { until } = JSON.parse(readFileSync(path.join(dir, 'watched.json'), 'utf8')) as {
      until: string;
    };
    const date = new Date(until);
    return Number.isNaN(date.getTime()) ? undefined : date;
  } catch {
    return undefined;
  }
};

/**
 * Every task of a loaded config as `task list` shows it, without a daemon: its schedule's next
 * run, its last run, and — when no daemon runs to have counted them — the scheduled runs due
 * since a daemon last watched (counted, not recorded: the next daemon records them).
 */
export const listTasks = (loaded: LoadedConfig, env: Env = process.env): TaskInfo[] => {
  const paths = nifflerPaths(loaded.root, env);
  const dir = taskRunsDir(paths);
  const runsFile = path.join(dir, 'runs.jsonl');
  // A daemon runs when its pid file names a live process (not a socket file: one killed -9
  // leaves its socket behind).
  const since = readPidFile(paths.pidFile) !== null ? undefined : watchedUntil(dir);
  const now = new Date();
  return usableExtensions(loaded).extensions.tasks.map((task) => {
    if (!task.schedule) return taskInfo(task, runsFile, {});
    const next = new Cron(task.schedule, { paused: true }).nextRun();
    const missed = since ? dueRuns(task.schedule, since, now).length : 0;
    return taskInfo(task, runsFile, { next, missed });
  });
};
