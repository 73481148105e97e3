import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchWorkspace, median, serverBin, settledDaemon, type Bench } from './harness.ts';

// What a warm daemon costs while nobody uses it: its CPU (all threads, /proc/PID/stat) over a
// quiet window after a burst of MCP calls, once it has done its start-up's one-time work (warmed
// itself and given back what that grew, daemon/settle.ts) — nothing may go on spinning once calls stop — against
// an idle Node process (a timer a second) measured over the same window.

const WINDOW_MS = 4000;
/**
 * Windows measured; the row is their median. The first ~15 s after the daemon settles hold V8's
 * own memory reducer's one-time passes (each thread ~8 s after its last full collection: 10-45 ms
 * CPU/s in one or two windows, per-thread schedstat), the windows after it ~1 ms CPU/s: five
 * windows let the median be the steady state, where three landed on the passes.
 */
const ROUNDS = 5;
/** Clock ticks a second (USER_HZ): 100 on Linux. */
const HZ = 100;

/** CPU seconds `pid` has used so far, user and system, all its threads. */
const cpuSeconds = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / HZ;
};

const bench: Bench = async () => {
  if (process.platform !== 'linux') return [];
  const ws = benchWorkspace(
    (base) =>
      `mcpServers:\n` +
      `  everything: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-everything'))}, stdio] }\n` +
      `  filesystem: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-filesystem'))}, ${JSON.stringify(base)}] }\n` +
      `  memory: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-memory'))}] }\n`,
  );
  const idleNode = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
    stdio: 'ignore',
  });
  await once(idleNode, 'spawn');
  try {
    await ws.niffler(['mcp', 'status', '--wait']);
    // Warm: its start-up's one-time work (the warming, then the reduction of its heap) done.
    const pid = await settledDaemon(ws);
    const ours: number[] = [];
    const baseline: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // A burst of calls, so the worker has just been polling; then nothing.
      await Promise.all(
        Array.from({ length: 8 }, () =>
          ws.niffler(['mcp', 'call', 'everything', 'echo', '--args', '{"message":"hi"}']),
        ),
      );
      const start = { ours: cpuSeconds(pid), base: cpuSeconds(idleNode.pid!) };
      await sleep(WINDOW_MS);
      const perSecond = (used: number) => (used * 1000) / (WINDOW_MS / 1000);
      ours.push(perSecond(cpuSeconds(pid) - start.ours));
      baseline.push(perSecond(cpuSeconds(idleNode.pid!) - start.base));
    }
    return [
      {
        name: 'warm daemon CPU while idle (3 servers, after a burst of calls)',
        ours: median(ours),
        baseline: median(baseline),
        baselineName: 'idle node process',
        unit: 'ms CPU/s',
        ratio: (median(ours) + 1) / (median(baseline) + 1),
        goal: '<= 10 ms CPU/s',
        notes: `median of ${ROUNDS} windows of ${WINDOW_MS / 1000} s; ${1000 / HZ} ms clock ticks; ratio of (x + 1 ms/s)`,
      },
    ];
  } finally {
    idleNode.kill('SIGKILL');
    await ws.remove();
  }
};
export default bench;
