import path from 'node:path';
import { execa } from 'execa';
import { benchWorkspace, median, type Bench, serverBin } from './harness.ts';

// From `kill -9` of the daemon to a served `niffler mcp status` (the next command finds the dead
// daemon's socket, starts a new daemon, which reaps what the old one left and starts the servers),
// against the same command starting a daemon where none ran (after a clean `daemon stop`). Three
// published servers, as in mcp-status.bench.ts; rounds alternate.
const ROUNDS = 7;

const bench: Bench = async () => {
  const ws = benchWorkspace(
    (base) =>
      `mcpServers:\n` +
      `  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]\n` +
      `  filesystem:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-filesystem'))}, ${JSON.stringify(base)}]\n` +
      `  memory:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-memory'))}]\n    env: { MEMORY_FILE_PATH: ${JSON.stringify(path.join(base, 'memory.jsonl'))} }\n`,
  );
  const status = async (): Promise<number> => {
    const start = process.hrtime.bigint();
    const result = await execa(
      process.execPath,
      [path.resolve('dist/cli.cjs'), 'mcp', 'status', '--json'],
      {
        cwd: ws.repo,
        env: ws.env,
        extendEnv: false,
      },
    );
    if (!result.stdout.includes('"servers"')) throw new Error(`mcp status said: ${result.stdout}`);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const daemonPid = async () =>
    (
      JSON.parse(
        ((await ws.niffler(['daemon', 'status', '--json'])) as { stdout: string }).stdout,
      ) as { pid: number }
    ).pid;
  try {
    const recovery: number[] = [];
    const cold: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await ws.niffler(['mcp', 'status', '--wait']);
      process.kill(await daemonPid(), 'SIGKILL');
      const start = process.hrtime.bigint();
      await status();
      recovery.push(Number(process.hrtime.bigint() - start) / 1e6);
      await ws.niffler(['mcp', 'status', '--wait']);
      await ws.niffler(['daemon', 'stop']);
      cold.push(await status());
    }
    return [
      {
        name: 'recovery: kill -9 of the daemon to a served mcp status (ms)',
        ours: median(recovery),
        baseline: median(cold),
        baselineName: 'mcp status starting a daemon',
        unit: 'ms',
        ratio: median(recovery) / median(cold),
        goal: '<= 500 ms',
        notes: `median of ${ROUNDS}; 3 servers (everything, filesystem, memory)`,
      },
    ];
  } finally {
    await ws.remove();
  }
};
export default bench;
