import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { benchWorkspace, median, serverBin, type Bench, type BenchResult } from './harness.ts';

// Cold start, no daemon yet: (1) from starting `niffler mcp status --wait` to the spawn of its
// first MCP server, against a raw-SDK script spawning the same server (goal ≤ 1.2x); (2) the whole
// cold `mcp status --wait` for three servers, against the raw-SDK script that connects to all three
// in parallel and lists their tools.

const ROUNDS = 7;
const mark = path.resolve('bench/fixtures/mark-and-serve.mjs');
const rawList = path.resolve('bench/fixtures/raw-sdk-list.mjs');

const bench: Bench = async () => {
  const servers = (base: string) => [
    {
      name: 'everything',
      command: process.execPath,
      args: [mark, serverBin('server-everything'), 'stdio'],
    },
    {
      name: 'filesystem',
      command: process.execPath,
      args: [mark, serverBin('server-filesystem'), base],
    },
    { name: 'memory', command: process.execPath, args: [mark, serverBin('server-memory')] },
  ];
  const ws = benchWorkspace(
    (base) =>
      `mcpServers:\n${servers(base)
        .map(
          (s) =>
            `  ${s.name}:\n    command: ${JSON.stringify(s.command)}\n    args: ${JSON.stringify(s.args)}\n    env: { NF_MARK: ${JSON.stringify(path.join(base, 'mark'))}, MEMORY_FILE_PATH: ${JSON.stringify(path.join(base, 'm.jsonl'))} }\n`,
        )
        .join('')}`,
  );
  const markFile = path.join(ws.base, 'mark');
  const env = { ...ws.env, NF_MARK: markFile, MEMORY_FILE_PATH: path.join(ws.base, 'm.jsonl') };
  /** Runs `command`; returns ms to its first server's spawn and ms to its end. */
  const timed = async (file: string, args: string[]): Promise<{ spawn: number; total: number }> => {
    rmSync(markFile, { force: true });
    const start = performance.timeOrigin + performance.now();
    await execa(file, args, { cwd: ws.repo, env, extendEnv: false, stdio: 'ignore' });
    const total = performance.timeOrigin + performance.now() - start;
    const first = Math.min(
      ...readFileSync(markFile, 'utf8')
        .trim()
        .split('\n')
        .map((line) => Number(line.split(' ')[0])),
    );
    return { spawn: first - start, total };
  };
  const ours = { spawn: [] as number[], total: [] as number[] };
  const raw = { spawn: [] as number[], total: [] as number[] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await ws.niffler(['daemon', 'stop']);
      const a = await timed(process.execPath, [
        path.resolve('dist/cli.cjs'),
        'mcp',
        'status',
        '--wait',
      ]);
      const b = await timed(process.execPath, [
        rawList,
        JSON.stringify(servers(ws.base).map((s) => ({ ...s, env: { NF_MARK: markFile } }))),
      ]);
      ours.spawn.push(a.spawn);
      ours.total.push(a.total);
      raw.spawn.push(b.spawn);
      raw.total.push(b.total);
    }
  } finally {
    await ws.remove();
  }
  const row = (name: string, o: number[], r: number[], goal?: string): BenchResult => ({
    name,
    ours: median(o),
    baseline: median(r),
    baselineName: 'raw SDK script',
    unit: 'ms',
    ratio: median(o) / median(r),
    ...(goal ? { goal } : {}),
  });
  return [
    row(
      'cold: start of mcp status --wait to the first server spawned',
      ours.spawn,
      raw.spawn,
      '<= 1.2x',
    ),
    row('cold: mcp status --wait, 3 servers ready', ours.total, raw.total),
  ];
};
export default bench;
