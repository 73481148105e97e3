import { readdir, readFile } from 'node:fs/promises';

/** True when the NUL-separated `environ` holds the entry `wanted` (`NAME=value\0`). */
const hasVariable = (environ: Buffer, wanted: Buffer): boolean => {
  for (let at = environ.indexOf(wanted); at !== -1; at = environ.indexOf(wanted, at + 1))
    if (at === 0 || environ[at - 1] === 0) return true;
  return false;
};

/**
 * Kills (SIGKILL) every process whose environment holds `tag` (`NAME=value`): what a command
 * left running outside its process group (`setsid`, a daemon that forked away), found by the
 * variable it inherited. Linux only (/proc); best effort — a process that cleared its
 * environment is not found. Resolves to how many were killed.
 */
export const killTagged = async (tag: string): Promise<number> => {
  const pids = await readdir('/proc').catch(() => [] as string[]);
  const wanted = Buffer.from(`${tag}\0`);
  let killed = 0;
  for (const pid of pids) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    // Unreadable for processes of other users, and gone for ones that exited meanwhile.
    const environ = await readFile(`/proc/${pid}/environ`).catch(() => null);
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
