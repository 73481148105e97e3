import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { execa } from 'execa';
import { reply } from '../test/fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../test/fixtures/fake-llm/server.ts';
import {
  benchWorkspace,
  fakeModelLines,
  median,
  serverBin,
  settledDaemon,
  type Bench,
} from './harness.ts';

// A warm daemon under use, with three stdio servers (everything, filesystem, memory):
// - idle: its RSS once the servers are up, it has warmed itself and been left idle for IDLE_S
//   (goal ≤ 120 MB, as wave 2's daemon-idle row);
// - soak: TURNS one-shot turns in a row (`niffler -p … --yes`, a front-end process each), each
//   with one MCP tool call (everything__echo) and an answer, its RSS sampled as they go; the
//   steady state is the median of the last third's samples (goal ≤ 150 MiB), and the slope over
//   that third says whether it still grows; the notes add its RSS once quiet after the turns (what
//   they left resident). NIFFLER_BENCH_SOAK_TURNS sets the count (default
//   300: about where the RSS stopped growing before; 900 is the figure).

const TURNS = Number(process.env['NIFFLER_BENCH_SOAK_TURNS'] ?? 300);
const SAMPLE_EVERY = 25;
/** How long the daemon is left idle before its idle RSS is read: seconds. */
const IDLE_S = 30;
const MIB = 1024 * 1024;

const rssBytes = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

const bench: Bench = async () => {
  if (process.platform !== 'linux') return [];
  const llm = await startFakeLlm();
  const ws = benchWorkspace((base) =>
    [
      ...fakeModelLines(llm.url, 'toolProtocol: native', 'contextWindow: 32000'),
      'mcpServers:',
      `  everything: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-everything'))}, stdio] }`,
      `  filesystem: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-filesystem'))}, ${JSON.stringify(base)}] }`,
      `  memory: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-memory'))}], env: { MEMORY_FILE_PATH: ${JSON.stringify(path.join(base, 'memory.jsonl'))} } }`,
      '',
    ].join('\n'),
  );
  try {
    await ws.niffler(['mcp', 'status', '--wait']);
    // The daemon warms itself (API worker, tool definitions) once its servers are up, then gives
    // back what that grew its own thread into (daemon/settle.ts). What it grew the workers' heaps
    // into (2-2.5 MiB each) V8 gives back by itself, its memory reducer running 8 s after a
    // thread's last full collection when it has gone idle: the row is the RSS of the daemon left
    // idle for IDLE_S after its servers came up, the notes add it once it has settled.
    const ready = performance.now();
    const pid = await settledDaemon(ws);
    const early = rssBytes(pid);
    await delay(Math.max(0, IDLE_S * 1000 - (performance.now() - ready)));
    const idle = rssBytes(pid);
    const samples: { turn: number; rss: number }[] = [];
    let failures = 0;
    const start = performance.now();
    for (let turn = 1; turn <= TURNS; turn++) {
      llm.queue(
        reply().tool('everything__echo', { message: `turn ${turn}` }),
        reply().text('done'),
      );
      const run = await execa(
        process.execPath,
        [path.resolve('dist/cli.cjs'), '-p', `echo turn ${turn}`, '--yes'],
        { cwd: ws.repo, env: ws.env, extendEnv: false, stdin: 'ignore', reject: false },
      );
      if (run.exitCode !== 0) failures++;
      if (turn % SAMPLE_EVERY === 0) samples.push({ turn, rss: rssBytes(pid) });
    }
    const perTurn = (performance.now() - start) / TURNS / 1000;
    // What the turns left resident: the RSS once the daemon has been quiet (and collected).
    await delay(3000);
    const after = rssBytes(pid);
    const last = samples.slice(-Math.max(2, Math.ceil(samples.length / 3)));
    const steady = median(last.map((s) => s.rss)) / MIB;
    const slope =
      ((last.at(-1)!.rss - last[0]!.rss) / MIB / Math.max(1, last.at(-1)!.turn - last[0]!.turn)) *
      100;
    const at = (turn: number) => samples.find((s) => s.turn >= turn);
    const trail = [50, 100, 300, 600, 900]
      .filter((turn) => turn <= TURNS)
      .map((turn) => `${turn}: ${((at(turn)?.rss ?? 0) / MIB).toFixed(0)}`)
      .join(', ');
    return [
      {
        name: 'warm daemon idle RSS, 3 servers',
        ours: idle / 1e6,
        baseline: idle / 1e6,
        baselineName: '(absolute figure)',
        unit: 'MB',
        ratio: 1,
        goal: '<= 120 MB',
        notes: `after ${IDLE_S} s idle; ${(early / 1e6).toFixed(0)} MB once settled`,
      },
      {
        name: `daemon steady RSS over ${TURNS} warm one-shot turns with a tool call each`,
        ours: steady,
        baseline: idle / MIB,
        baselineName: 'the same daemon idle',
        unit: 'MiB',
        ratio: steady / (idle / MIB),
        goal: '<= 150 MiB',
        notes: `MiB after turns ${trail}; last third grows ${slope.toFixed(1)} MiB per 100 turns; ${(after / MIB).toFixed(0)} MiB once quiet after them; ${failures} failed; ${perTurn.toFixed(2)} s per turn`,
      },
    ];
  } finally {
    await ws.remove();
    await llm.close();
  }
};
export default bench;
