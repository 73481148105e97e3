import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { benchWorkspace, median, type Bench } from './harness.ts';

// The daemon's peak RSS while `niffler mcp call` takes a 10 MB result from a stdio server, against
// the peak RSS of the raw SDK client making the same call in a process of its own. The daemon's
// peak is its VmHWM, reset (Linux: /proc/PID/clear_refs) before each call.
const tsx = import.meta.resolve('tsx');
const huge = path.resolve('test/fixtures/mcp/huge.ts');
// "line 1\n…line 800000": 9.5 MB of text, a 10.3 MB message on the wire — about the most the raw
// SDK client's stdio transport takes (10 MiB a message).
const LINES = 800_000;
const ROUNDS = 3;

const status = (pid: number, field: 'VmHWM' | 'VmRSS'): number =>
  Number(
    new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1],
  );

const bench: Bench = async () => {
  const server = { command: process.execPath, args: ['--import', tsx, huge] };
  const ws = benchWorkspace(
    () =>
      `mcpServers:\n  huge:\n    command: ${JSON.stringify(server.command)}\n    args: ${JSON.stringify(server.args)}\n`,
  );
  const args = JSON.stringify({ lines: LINES });
  try {
    await ws.niffler(['mcp', 'status', '--wait']);
    const { stdout } = (await ws.niffler(['daemon', 'status', '--json'])) as { stdout: string };
    const pid = (JSON.parse(stdout) as { pid: number }).pid;
    const call = () => ws.niffler(['mcp', 'call', 'huge', 'huge', '--args', args]);
    await call();
    const idle = status(pid, 'VmRSS');
    const ours: number[] = [];
    const raw: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      await call();
      ours.push(status(pid, 'VmHWM') / 1024);
      const baseline = await execa(process.execPath, [
        path.resolve('bench/fixtures/raw-sdk-call.mjs'),
        JSON.stringify(server),
        'huge',
        args,
      ]);
      raw.push(Number(baseline.stdout.trim()) / 1024);
    }
    return [
      {
        name: 'daemon peak RSS, a 10 MB MCP result (mcp call)',
        ours: median(ours),
        baseline: median(raw),
        baselineName: 'raw SDK client process',
        unit: 'MiB',
        ratio: median(ours) / median(raw),
        goal: '<= 150 MiB',
        notes: `a 10.3 MB message; daemon RSS before the call ${(idle / 1024).toFixed(0)} MiB; median of ${ROUNDS} calls`,
      },
    ];
  } finally {
    await ws.remove();
  }
};
export default bench;
