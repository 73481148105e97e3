import { readdirSync, readFileSync } from 'node:fs';
import { isAlive } from '../../src/main/daemon/lifecycle.ts';

/** A running process (zombies left out) and its command line, arguments joined by spaces. */
export interface RunningProcess {
  pid: number;
  cmd: string;
}

/** Every running process of this machine whose command line contains `text` (Linux /proc). */
export const processesWith = (text: string): RunningProcess[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
        return cmd.includes(text) && isAlive(Number(name)) ? [{ pid: Number(name), cmd }] : [];
      } catch {
        return []; // gone meanwhile
      }
    });

/** The daemons running for the workspace `root` (`daemon.cjs --root ROOT`). */
export const daemonsOf = (root: string): RunningProcess[] =>
  processesWith(`--root ${root}`).filter((p) => /daemon\.(cjs|js|ts) --root/.test(p.cmd));

/** Kills (SIGKILL) every process whose command line contains `marker`: a test's last resort. */
export const killAllWith = (marker: string): void => {
  for (const { pid } of processesWith(marker))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
};
