import { appendFileSync } from 'node:fs';

// The cold-start timeline (bench/cold-start.bench.ts): with NIFFLER_TIMELINE naming a file, each
// step of a cold start appends one line, `<ms since the epoch> <pid> <step>`, from whichever
// process or thread takes it (the front-end, the daemon, its workers). Unset (always, outside the
// bench), a mark is one property read.

const file = process.env['NIFFLER_TIMELINE'];

/**
 * Notes that `step` happened now (or, `atStart`, when this process started), when a timeline is
 * kept. (`performance` is read only then: its first use loads node:perf_hooks, ~5 ms.)
 */
export const mark = (step: string, atStart = false): void => {
  if (!file) return;
  const time = performance.timeOrigin + (atStart ? 0 : performance.now());
  try {
    appendFileSync(file, `${time.toFixed(1)} ${process.pid} ${step}\n`);
  } catch {
    // A timeline that cannot be written is the bench's problem, never the command's.
  }
};
