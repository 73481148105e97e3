import { readFileSync, writeFileSync } from 'node:fs';
import { isSameProcess, processStartTime } from './process-group.ts';

// `$NIFFLER_HOME/run/<hash>.pid`: the running daemon's pid and start time, written once it holds
// its lock. Front-ends read it to name a daemon that does not answer, and to end it by force.

/** Writes this process's pid and start time to `file`. */
export const writePidFile = (file: string): void =>
  writeFileSync(file, `${process.pid} ${processStartTime(process.pid) ?? ''}\n`, { mode: 0o600 });

/** The pid in `file` while that very process runs (not a reused pid); null otherwise. */
export const readPidFile = (file: string): number | null => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const [pidText, start] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return isSameProcess(pid, start || null) ? pid : null;
};
