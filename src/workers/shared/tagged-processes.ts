import { readdirSync, readFileSync } from 'node:fs';

/** True when the NUL-separated `environ` holds the entry `wanted` (`NAME=value\0`). */
const hasVariable = (environ: Buffer, wanted: Buffer): boolean => {
  for (let at = environ.indexOf(wanted); at !== -1; at = environ.indexOf(wanted, at + 1))
    if (at === 0 || environ[at - 1] === 0) return true;
  return false;
};

const readOrNull = (file: string): Buffer | null => {
  try {
    return readFileSync(file);
  } catch {
    // Unreadable for processes of other users, and gone for ones that exited meanwhile.
    return null;
  }
};

/** The pids running now (Linux: /proc; elsewhere none). */
export const runningPids = (): Set<number> => {
  try {
    return new Set(
      readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .map(Number),
    );
  } catch {
    return new Set();
  }
};

/** True for a process that has exited and waits to be reaped (state `Z` in /proc/PID/stat). */
const isZombie = (pid: number): boolean => {
  const stat = readOrNull(`/proc/${pid}/stat`)?.toString('utf8');
  return stat === undefined || stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z';
};

/**
 * The live processes whose environment holds `tag` (`NAME=value`), among those not in `before`
 * (the pids running when the command started), so a sweep reads a handful of files.
 */
const taggedPids = (tag: string, before: ReadonlySet<number>): number[] => {
  const wanted = Buffer.from(`${tag}\0`);
  return [...runningPids()].filter((pid) => {
    if (before.has(pid) || pid === process.pid) return false;
    const environ = readOrNull(`/proc/${pid}/environ`);
    return environ !== null && hasVariable(environ, wanted) && !isZombie(pid);
  });
};

/**
 * Kills (SIGKILL) every process whose environment holds `tag`: what a command left running
 * outside its process group (`setsid`, a daemon that forked away), found by the variable it
 * inherited. Linux only (/proc); best effort — a process that cleared its environment is not
 * found. Returns how many were killed.
 */
export const killTagged = (tag: string, before: ReadonlySet<number> = new Set()): number => {
  let killed = 0;
  for (const pid of taggedPids(tag, before)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // Exited between the read and the kill.
    }
  }
  return killed;
};

/** Kills what is tagged until none is left alive (a kill lands asynchronously), at most `maxMs`. */
export const endTagged = async (
  tag: string,
  before: ReadonlySet<number>,
  maxMs = 3000,
): Promise<boolean> => {
  for (let waited = 0; waited < maxMs; waited += 10) {
    if (killTagged(tag, before) === 0 && taggedPids(tag, before).length === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return taggedPids(tag, before).length === 0;
};
