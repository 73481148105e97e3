import { once } from 'node:events';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { reply, type ReplyBuilder } from '../test/fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../test/fixtures/fake-llm/server.ts';
import {
  benchWorkspace,
  type Bench,
  type BenchWorkspace,
  fakeModelLines,
  settledDaemon,
} from './harness.ts';

// Peak RSS of a real daemon (VmHWM of its process: main thread and every worker, reset once it
// has settled after its servers came up) over one one-shot turn whose single tool call returns
// something large, against a daemon of the same build serving the same call on something tiny, in
// the same run:
// - read_file of a page at the end of a 200 MB text file (the whole file streams through), against
//   a page of a 1 KB file;
// - an MCP tool (test/fixtures/mcp/huge.ts) returning 10 MB of text, against one returning a line.
// Goal ≤ 150 MiB for both (wave 1: 410 MiB and 277 MiB).
const MIB = 1024 * 1024;
const BIG_LINES = 2_000_000; // 100 bytes each: 200 MB
const HUGE_LINES = 870_000; // "line N": about 10 MB
const tsx = import.meta.resolve('tsx');
const hugeFixture = fileURLToPath(new URL('../test/fixtures/mcp/huge.ts', import.meta.url));

const config = (llm: FakeLlm) => () =>
  [
    ...fakeModelLines(llm.url, 'toolProtocol: native'),
    'mcpServers:',
    '  huge:',
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [--import, ${JSON.stringify(tsx)}, ${JSON.stringify(hugeFixture)}]`,
    '',
  ].join('\n');

/** Writes `lines` lines of 100 bytes to `file`, streaming. */
const writeTextFile = async (file: string, lines: number): Promise<void> => {
  const out = createWriteStream(file);
  const line = `${'x'.repeat(90)}\n`;
  for (let i = 0; i < lines; i++)
    if (!out.write(`${String(i).padStart(9, '0')}${line}`)) await once(out, 'drain');
  out.end();
  await once(out, 'close');
};

/** The daemon's peak RSS in MiB, read from /proc (VmHWM) after a turn of `call`. */
const peakAfter = async (
  llm: FakeLlm,
  call: ReplyBuilder,
  prepare?: (ws: BenchWorkspace) => Promise<void>,
) => {
  const ws = benchWorkspace(config(llm));
  try {
    await prepare?.(ws);
    await ws.niffler(['mcp', 'status', '--wait']);
    // The peak of the turn, not of the daemon's start-up (its threads booting, its servers'
    // catalogs arriving, its warming, which can still be under way when the servers are up: the
    // turn starts once the daemon has settled, as the idle rows do). Linux resets VmHWM to the
    // current RSS on a `5` here.
    const pid = await settledDaemon(ws);
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    llm.queue(call, reply().text('done'));
    const turn = (await ws.niffler(['-p', 'go', '--yes'])) as {
      exitCode?: number;
      stderr?: string;
    };
    if (turn.exitCode !== 0) throw new Error(`the turn failed: ${turn.stderr ?? ''}`);
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    if (!hwm) throw new Error('no VmHWM for the daemon');
    return Number(hwm) / 1024;
  } finally {
    await ws.remove();
  }
};

const bench: Bench = async () => {
  const llm = await startFakeLlm();
  try {
    const smallRead = await peakAfter(llm, reply().tool('read_file', { path: 'small.txt' }), (ws) =>
      writeTextFile(path.join(ws.repo, 'small.txt'), 10),
    );
    const bigRead = await peakAfter(
      llm,
      reply().tool('read_file', { path: 'big.txt', offset: BIG_LINES - 100, limit: 100 }),
      (ws) => writeTextFile(path.join(ws.repo, 'big.txt'), BIG_LINES),
    );
    const smallMcp = await peakAfter(llm, reply().tool('huge__huge', { lines: 1 }));
    const bigMcp = await peakAfter(llm, reply().tool('huge__huge', { lines: HUGE_LINES }));
    return [
      {
        name: 'daemon peak RSS, read_file of a page at the end of a 200 MB file',
        ours: bigRead,
        baseline: smallRead,
        baselineName: 'the same turn on a 1 KB file',
        unit: 'MiB',
        ratio: bigRead / smallRead,
        goal: '<= 150 MiB',
        notes: `the 200 MB file streams through; ${(bigRead - smallRead).toFixed(1)} MiB above the baseline`,
      },
      {
        name: 'daemon peak RSS, an MCP tool returning 10 MB',
        ours: bigMcp,
        baseline: smallMcp,
        baselineName: 'the same turn with a one-line result',
        unit: 'MiB',
        ratio: bigMcp / smallMcp,
        goal: '<= 150 MiB',
        notes: `${HUGE_LINES} lines, ${((HUGE_LINES * 12) / MIB).toFixed(1)} MiB of text`,
      },
    ];
  } finally {
    await llm.close();
  }
};
export default bench;
