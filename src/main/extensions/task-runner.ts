import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Cron } from 'croner';
import { makeDirSync } from '../../workers/shared/fs-errors.ts';
import { appendLinesSync } from '../../workers/shared/whole-write.ts';
import type { LoadedConfig } from './workspace-config.ts';
import { NifflerError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { PromptParams, TaskInfo, TaskRun, TurnSummary } from '../protocol.ts';
import type { TurnIO } from '../calls/types.ts';
import { usableExtensions } from './load.ts';
import type { SessionOptions } from './session-state.ts';
import { findAgent } from './turn.ts';
import { dueRuns, readRuns, taskInfo, watchedUntil } from './task-list.ts';
import type { TaskDefinition } from './tasks.ts';

/** How often a daemon with schedules notes that it is still watching them. */
const HEARTBEAT_MS = 60_000;

/** What a task's run needs of the session it runs in (the engine's `Session` is one). */
interface TaskSession {
  readonly id: string;
  prompt(params: PromptParams, io: TurnIO, signal: AbortSignal): Promise<TurnSummary>;
  close(): Promise<void>;
}

interface TaskRunnerOptions {
  /** `$NIFFLER_HOME/task-runs/<workspace-key>`: the runs (`runs.jsonl`) and what was watched. */
  dir: string;
  /** A new session of this workspace (the engine makes it: extensions never import the engine). */
  newSession: (options: SessionOptions) => TaskSession;
  loaded: () => LoadedConfig | null;
  /** Told after every run (the `task/ran` notification). */
  onRun: (run: TaskRun) => void;
  /** Told when runs start or end and schedules change (the daemon's idle timer). */
  onActivity: () => void;
  log: Logger;
}

/** The prompt of a task with its inputs filled in (`{{name}}`); throws on missing or unknown ones. */
const taskPrompt = (task: TaskDefinition, given: Record<string, string>): string => {
  const unknown = Object.keys(given).filter((k) => !(k in task.inputs));
  if (unknown.length)
    throw new NifflerError(
      'usage',
      `task ${task.name} has no input ${unknown.join(', ')}; its inputs: ${Object.keys(task.inputs).join(', ') || 'none'}`,
    );
  const values: Record<string, string> = {};
  for (const [name, input] of Object.entries(task.inputs)) {
    const value = given[name] ?? (input.default !== undefined ? String(input.default) : undefined);
    if (value === undefined && input.required)
      throw new NifflerError('usage', `task ${task.name} needs --input ${name}=…`);
    values[name] = value ?? '';
  }
  const text = task.prompt ?? task.command ?? '';
  return text.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
};

/** A turn's events go nowhere: a task run has no front-end, and asks nobody. */
const SILENT: TurnIO = {
  emit: () => {},
  ask: () => Promise.reject(new Error('a task never asks')),
};

/**
 * Runs tasks — by hand, or on their cron schedules while the daemon runs — each as a session of
 * its own that never asks (what its policy does not allow is denied and reported). Every run,
 * and every scheduled run missed while no daemon watched, goes to the task's history.
 */
export class TaskRunner {
  #crons: { task: string; cron: Cron }[] = [];
  #heartbeat: NodeJS.Timeout | undefined;
  #running = 0;
  #missed = new Map<string, number>();
  #checkedMissed = false;

  constructor(private readonly options: TaskRunnerOptions) {}

  get running(): number {
    return this.#running;
  }

  get scheduled(): number {
    return this.#crons.length;
  }

  get #runsFile(): string {
    return path.join(this.options.dir, 'runs.jsonl');
  }

  get #watchedFile(): string {
    return path.join(this.options.dir, 'watched.json');
  }

  #tasks(): TaskDefinition[] {
    const loaded = this.options.loaded();
    return loaded ? usableExtensions(loaded).extensions.tasks : [];
  }

  #find(name: string): TaskDefinition {
    const tasks = this.#tasks();
    const task = tasks.find((t) => t.name === name);
    if (task) return task;
    throw new NifflerError(
      'usage',
      `no task named "${name}"; there are: ${tasks.map((t) => t.name).join(', ') || 'none'} (niffler task list)`,
    );
  }

  /** Runs a task now, as a new session; resolves with its session id and its turn's summary. */
  async run(
    name: string,
    inputs: Record<string, string>,
    trigger: TaskRun['trigger'],
    signal: AbortSignal = new AbortController().signal,
  ): Promise<{ sessionId: string; summary: TurnSummary }> {
    const task = this.#find(name);
    const text = taskPrompt(task, inputs);
    const loaded = this.options.loaded();
    // A task's profile that does not exist is an error, never a fallback to another one.
    if (task.agent && loaded) findAgent(usableExtensions(loaded).extensions, task.agent);
    const session = this.options.newSession({
      ...(task.agent ? { agent: task.agent } : {}),
      task: task.name,
      ...(task.maxSteps ? { maxSteps: task.maxSteps } : {}),
    });
    const startedAt = new Date().toISOString();
    this.#running++;
    this.options.onActivity();
    try {
      const summary = await session.prompt(
        {
          sessionId: session.id,
          text,
          interactive: false,
          ...(task.model ? { model: task.model } : {}),
        },
        SILENT,
        signal,
      );
      this.#record({
        task: name,
        trigger,
        sessionId: session.id,
        startedAt,
        endedAt: new Date().toISOString(),
        outcome: summary.outcome,
        denied: summary.denied,
        ...(summary.error ? { error: summary.error } : {}),
      });
      return { sessionId: session.id, summary };
    } finally {
      await session.close();
      this.#running--;
      this.options.onActivity();
    }
  }

  #record(run: TaskRun): void {
    try {
      makeDirSync(this.options.dir);
      appendLinesSync(this.#runsFile, `${JSON.stringify(run)}\n`);
    } catch (error) {
      this.options.log.warn('task history not written', { error: (error as Error).message });
    }
    this.options.onRun(run);
  }

  /** The runs of `name` (missed ones included), oldest first, the last 50. */
  history(name: string): TaskRun[] {
    return readRuns(this.#runsFile, name);
  }

  /** Every task as listings show it: its schedule's next run, its last run, runs missed. */
  list(): TaskInfo[] {
    return this.#tasks().map((task) =>
      taskInfo(task, this.#runsFile, {
        next: this.#crons.find((c) => c.task === task.name)?.cron.nextRun() ?? null,
        missed: this.#missed.get(task.name) ?? 0,
      }),
    );
  }

  /**
   * Schedules the tasks that have a schedule (again, after a reload); the first time, reports
   * the runs missed since a daemon last watched them — they are not run now.
   */
  schedule(): void {
    this.stop();
    const scheduled = this.#tasks().filter((t) => t.schedule);
    if (!this.#checkedMissed) this.#reportMissed(scheduled);
    this.#checkedMissed = true;
    for (const task of scheduled) {
      const cron = new Cron(task.schedule!, { protect: true }, async () => {
        this.#watched();
        await this.run(task.name, {}, 'schedule').catch((error: unknown) =>
          this.options.log.error('scheduled task failed', {
            task: task.name,
            error: (error as Error).message,
          }),
        );
      });
      this.#crons.push({ task: task.name, cron });
    }
    if (this.#crons.length) {
      this.#watched();
      this.#heartbeat = setInterval(() => this.#watched(), HEARTBEAT_MS);
    }
    this.options.onActivity();
  }

  /** Notes that schedules are watched until now (what the next daemon counts missed runs from). */
  #watched(): void {
    try {
      makeDirSync(this.options.dir);
      writeFileSync(this.#watchedFile, JSON.stringify({ until: new Date().toISOString() }));
    } catch {
      // Missed runs cannot be told next time; nothing else depends on it.
    }
  }

  #reportMissed(tasks: TaskDefinition[]): void {
    const since = watchedUntil(this.options.dir);
    if (!since) return; // Never watched here: nothing was missed.
    const now = new Date();
    for (const task of tasks) {
      const missed = dueRuns(task.schedule!, since, now);
      if (missed.length === 0) continue;
      this.#missed.set(task.name, missed.length);
      this.#record({
        task: task.name,
        trigger: 'schedule',
        startedAt: missed[0]!.toISOString(),
        endedAt: missed.at(-1)!.toISOString(),
        outcome: 'missed',
        missed: missed.length,
      });
      this.options.log.warn('scheduled runs missed while no daemon ran', {
        task: task.name,
        missed: missed.length,
      });
    }
  }

  /** Stops the schedules for good (the daemon ends), noting until when they were watched. */
  close(): void {
    if (this.#crons.length) this.#watched();
    this.stop();
  }

  /** Stops every schedule (a run in progress goes on). */
  stop(): void {
    for (const { cron } of this.#crons) cron.stop();
    this.#crons = [];
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }
}
