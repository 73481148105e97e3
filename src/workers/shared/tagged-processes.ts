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

/**
 * Kills (SIGKILL) every process whose environment holds `tag` (`NAME=value`): what a command
 * left running outside its process group (`setsid`, a daemon that forked away), found by the
 * variable it inherited. Only processes not in `before` (the pids running when the command
 * started) are looked at, so a sweep reads a handful of files. Linux only (/proc); best effort —
 * a process that cleared its environment is not found. Returns how many were killed.
 */
export const killTagged = (tag: string, before: ReadonlySet<number> = new Set()): number => {
  const wanted = Buffer.from(`${tag}\0`);
  let killed = 0;
  for (const pid of runningPids()) {
    if (before.has(pid) || pid === process.pid) continue;
    const environ = readOrNull(`/proc/${pid}/environ`);
    if (!environ || !hasVariable(environ, wanted)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // Exited between the read and the kill.
    }
  }
  return killed;
};
