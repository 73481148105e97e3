import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Sends `signal` to the whole process group `pgid`; false when the group is gone. */
export const killGroup = (pgid: number, signal: NodeJS.Signals | 0): boolean => {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: every process of the group has exited and been reaped.
    return false;
  }
};

/** Fields of `/proc/<pid>/stat` after the command name: state, ppid, pgrp, … */
const statFields = async (pid: string): Promise<string[] | null> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat ? stat.slice(stat.lastIndexOf(')') + 2).split(' ') : null;
};

/** `/proc/<pid>/stat` after the command name (state, ppid, pgrp, …), read at once; null if none. */
const statFieldsNow = (pid: number): string[] | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
};

/**
 * When process `pid` started (clock ticks since boot, `/proc/<pid>/stat` field 22): with the pid,
 * it names one process for good, as a pid alone does not once it is reused. Null where there is
 * no `/proc` or no such process.
 */
export const processStartTime = (pid: number): string | null => statFieldsNow(pid)?.[19] ?? null;

/**
 * True when `pid` runs (a zombie has exited) and is the process that `start` names, when that is
 * known: not a reused pid.
 */
export const isSameProcess = (pid: number, start: string | null): boolean => {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const fields = statFieldsNow(pid);
  if (!fields) return true;
  return fields[0] !== 'Z' && (start === null || fields[19] === start);
};

/**
 * True when a process of group `pgid` is still running. A killed orphan stays a zombie until
 * init reaps it, which some container inits do only every few seconds; a zombie has exited, so
 * on Linux `/proc` is read to skip zombies. Elsewhere any member counts.
 */
export const isGroupRunning = async (pgid: number): Promise<boolean> => {
  if (!killGroup(pgid, 0)) return false;
  const pids = await readdir('/proc').catch(() => null);
  if (!pids) return true;
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    const fields = await statFields(pid);
    if (fields && Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
  }
  return false;
};

/** Resolves once no process of group `pgid` is running, checking every 20 ms for `maxMs`. */
export const waitGroupGone = async (pgid: number, maxMs = 3000): Promise<boolean> => {
  for (let waited = 0; waited < maxMs; waited += 20) {
    if (!(await isGroupRunning(pgid))) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !(await isGroupRunning(pgid));
};

/**
 * A process group the daemon started (a server and whatever it spawned), as recorded under the
 * run directory while it runs: enough for a later daemon to end it if this one is killed.
 */
export interface GroupRecord {
  /** The group's leader; the group id is the same number. */
  pid: number;
  /** The leader's `processStartTime`, so a reused pid is never taken for it. */
  start: string | null;
  /** What it is (the server's name), for the log. */
  label: string;
  /** The daemon that started it: while that process runs, the group is its business. */
  owner: { pid: number; start: string | null };
}

/** Records a group in `dir` (one file per group); a failure to write is returned, not thrown. */
export const recordGroup = (dir: string, record: GroupRecord): Error | undefined => {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dir, `${record.pid}.json`), JSON.stringify(record), { mode: 0o600 });
    return undefined;
  } catch (error) {
    return error as Error;
  }
};

/** Forgets the record of group `pid` (it has ended). */
export const forgetGroup = (dir: string, pid: number): void =>
  rmSync(path.join(dir, `${pid}.json`), { force: true });

/** This process as the owner of the groups it records. */
export const selfAsOwner = (): GroupRecord['owner'] => ({
  pid: process.pid,
  start: processStartTime(process.pid),
});

const readRecord = async (file: string): Promise<GroupRecord | null> => {
  try {
    const record = JSON.parse(await readFile(file, 'utf8')) as GroupRecord;
    return Number.isInteger(record.pid) && record.pid > 1 && record.owner ? record : null;
  } catch {
    return null;
  }
};

/** The groups with a running (not zombie) member, from one look at `/proc`; null without it. */
const runningGroups = async (): Promise<Set<number> | null> => {
  const pids = await readdir('/proc').catch(() => null);
  if (!pids) return null;
  const groups = new Set<number>();
  await Promise.all(
    pids
      .filter((pid) => /^\d+$/.test(pid))
      .map(async (pid) => {
        const fields = await statFields(pid);
        if (fields && fields[0] !== 'Z') groups.add(Number(fields[2]));
      }),
  );
  return groups;
};

/** The records in `dir` whose owner has gone; unreadable records are removed. */
const orphanedRecords = async (dir: string): Promise<{ file: string; record: GroupRecord }[]> => {
  const names = await readdir(dir).catch(() => [] as string[]);
  const found: { file: string; record: GroupRecord }[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = path.join(dir, name);
    const record = await readRecord(file);
    if (!record) rmSync(file, { force: true });
    else if (!isSameProcess(record.owner.pid, record.owner.start)) found.push({ file, record });
  }
  return found;
};

/**
 * Ends the groups recorded in `dir` whose owner has gone (a daemon killed with -9 leaves its
 * servers running when they ignore the end of their input): SIGKILL to the group, then waits until
 * none of it runs. A group is hit only if its leader is the process recorded (same start time), or
 * the leader has exited and its group lives on (a pid is not reused while its group exists).
 * Returns what was ended; the records of those groups, and of groups already gone, are removed.
 */
export const reapGroups = async (dir: string): Promise<GroupRecord[]> => {
  const orphans = await orphanedRecords(dir);
  if (orphans.length === 0) return [];
  // A leader that runs, the very process recorded, says its group runs: `/proc` is read whole
  // (a few hundred files) only when some leader has gone and its group may live on without it.
  const leaders = orphans.map(({ record }) => {
    const fields = statFieldsNow(record.pid);
    const start = fields?.[19] ?? null;
    return { start, runs: fields?.[0] !== 'Z' && start !== null && start === record.start };
  });
  const running = leaders.every((leader) => leader.runs) ? null : await runningGroups();
  const reaped = orphans.filter(({ record }, i) => {
    const leader = leaders[i]!;
    const isOurs = leader.start === null || record.start === null || leader.start === record.start;
    const isRunning = leader.runs || (running ? running.has(record.pid) : killGroup(record.pid, 0));
    return isOurs && isRunning && killGroup(record.pid, 'SIGKILL');
  });
  await Promise.all(reaped.map(({ record }) => waitGroupGone(record.pid)));
  for (const { file } of orphans) rmSync(file, { force: true });
  return reaped.map(({ record }) => record);
};
