import { readdir, readFile } from 'node:fs/promises';

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
