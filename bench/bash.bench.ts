import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ToolsSchema } from '../src/main/config/schema.ts';
import { ToolsHost } from '../src/main/threads/tools.ts';
import { probeBwrap } from '../src/workers/shared/sandbox-command.ts';
import { median, type Bench, type BenchResult } from './harness.ts';

// What one bash tool call costs, start to result, through the real tools pool (task dispatch,
// minimal environment, output file, process-group handling), unsandboxed and in bubblewrap,
// against `sh -c true` spawned directly in the same run. Rounds alternate so machine noise hits
// all three alike.
const ROUNDS = 60;

const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

const spawnDirect = async (): Promise<number> => {
  const start = process.hrtime.bigint();
  const child = spawn('sh', ['-c', 'true'], { stdio: 'ignore' });
  await once(child, 'exit');
  return elapsedMs(start);
};

const bench: Bench = async () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-bench-bash-')));
  const root = path.join(base, 'repo');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  const env = { ...process.env, NIFFLER_HOME: path.join(base, 'h') };
  const hostFor = (sandbox: 'off' | 'bwrap') =>
    new ToolsHost({ root, env, maxThreads: 1, tools: ToolsSchema.parse({ bash: { sandbox } }) });
  const bwrap = await probeBwrap();
  const hosts = { off: hostFor('off'), ...(bwrap.ok ? { bwrap: hostFor('bwrap') } : {}) };
  const call = (host: ToolsHost) => async (): Promise<number> => {
    const start = process.hrtime.bigint();
    const result = await host.run(
      { name: 'bash', args: { command: 'true' } },
      new AbortController().signal,
    );
    if (!result.ok) throw new Error(result.error.message);
    return elapsedMs(start);
  };
  try {
    const runs = {
      direct: spawnDirect,
      off: call(hosts.off),
      bwrap: hosts.bwrap && call(hosts.bwrap),
    };
    const times: Record<string, number[]> = { direct: [], off: [], bwrap: [] };
    for (let round = -5; round < ROUNDS; round++)
      for (const [name, run] of Object.entries(runs)) {
        if (!run) continue;
        const ms = await run();
        if (round >= 0) times[name]!.push(ms);
      }
    const direct = median(times['direct']!);
    const row = (name: string, ms: number[], notes: string): BenchResult => ({
      name,
      ours: median(ms),
      baseline: direct,
      baselineName: 'sh -c true, spawned directly',
      unit: 'ms',
      ratio: median(ms) / direct,
      notes,
    });
    return [
      row('bash tool call, unsandboxed (median)', times['off']!, `${ROUNDS} calls of \`true\``),
      ...(bwrap.ok
        ? [
            row(
              'bash tool call in bubblewrap (median)',
              times['bwrap']!,
              `${ROUNDS} calls of \`true\``,
            ),
          ]
        : []),
    ];
  } finally {
    await Promise.all(Object.values(hosts).map((host) => host.close()));
    rmSync(base, { recursive: true, force: true });
  }
};
export default bench;
