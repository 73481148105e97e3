import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { execa } from 'execa';
import { waitUntil } from '../src/main/daemon/lifecycle.ts';
import type { LspStatusResult } from '../src/main/protocol.ts';
import { LspHost } from '../src/main/threads/lsp.ts';
import { LspManager } from '../src/workers/lsp/manager.ts';
import type { LspWorkerData } from '../src/workers/protocol/lsp.ts';
import { reply } from '../test/fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../test/fixtures/fake-llm/server.ts';
import { benchWorkspace, fakeModelLines, median, type Bench, type BenchResult } from './harness.ts';

// Language servers, four rows:
// - an edit_file call with its diagnostics, through the daemon with a warm typescript-language-server
//   (the call's time as the turn's --json reports it: the edit, the old text to the server, the new
//   one, its diagnostics), against a cold `tsc --noEmit` of the same project, interleaved;
// - the daemon's RSS with that one warm TypeScript server, against the same daemon before any
//   language server ran (the server's own processes in the notes);
// - why the clients live on a worker thread: what the engine's thread goes through while a server
//   floods diagnostics — its longest stall (one 26 MB message) and its busy time (200 messages of
//   130 KB) — against the same client (LspManager) on the main thread.
const TSL = path.resolve('node_modules/.bin/typescript-language-server');
const TSC = path.resolve('node_modules/typescript/bin/tsc');
const PROJECT = path.resolve('test/fixtures/lsp/ts-project');
const FAKE = path.resolve('test/fixtures/lsp/fake-server.ts');
const tsx = import.meta.resolve('tsx');
const ROUNDS = 7;
/** Flood: notifications of 1000 diagnostics each (~130 KB apiece), ~26 MB in all. */
const FLOOD = 200;

const rssMiB = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
};

/** RSS of a process group (the server and the tsservers it starts). */
const groupRssMiB = (pgid: number): number => {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p)))
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const group = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (group === pgid) total += rssMiB(Number(pid));
    } catch {
      // Gone meanwhile.
    }
  return total;
};

const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** The edit rows: warm diagnostics through the daemon against a cold tsc; then RSS. */
const editRows = async (): Promise<BenchResult[]> => {
  const llm = await startFakeLlm();
  const config = (enabled: boolean) =>
    [
      ...fakeModelLines(llm.url),
      'lsp:',
      `  enabled: ${enabled}`,
      '  diagnosticsWait: 60',
      '  typescript:',
      `    command: ${JSON.stringify(TSL)}`,
      '',
    ].join('\n');
  // Language servers off at first: the baseline daemon has run the same turns without one.
  const ws = benchWorkspace(() => config(false));
  cpSync(PROJECT, ws.repo, { recursive: true });
  const niffler = (args: string[]) =>
    ws.niffler(args) as Promise<{ stdout: string; stderr: string; exitCode: number }>;
  const status = async () =>
    JSON.parse((await niffler(['lsp', 'status', '--json'])).stdout) as LspStatusResult;
  const typescript = async () => (await status()).servers.find((s) => s.name === 'typescript')!;
  try {
    await status(); // starts the daemon
    const daemon = JSON.parse((await niffler(['daemon', 'status', '--json'])).stdout) as {
      pid: number;
    };
    const original = readFileSync(path.join(ws.repo, 'src/main.ts'), 'utf8');
    /** One edit_file call (breaking or fixing the file) through a turn; its ms and what it found. */
    const edit = async (round: number): Promise<{ ms: number; found: boolean }> => {
      const [from, to] =
        round % 2
          ? ['(): number => greet', '(): string => greet']
          : ['(): string => greet', '(): number => greet'];
      llm.queue(
        reply().tool('edit_file', { path: 'src/main.ts', oldText: from, newText: to }),
        reply().text('ok'),
      );
      const run = await niffler(['-p', '--yes', '--json', 'edit']);
      const result = run.stdout
        .split('\n')
        .filter(Boolean)
        .map(
          (line) => JSON.parse(line) as { type: string; ms?: number; result?: { output?: string } },
        )
        .find((e) => e.type === 'tool-result');
      return {
        ms: result?.ms ?? Number.NaN,
        found: (result?.result?.output ?? '').includes('error TS2322'),
      };
    };
    for (let round = 0; round < 4; round++) await edit(round);
    const offRss = rssMiB(daemon.pid);
    // On: the daemon reloads its config and starts the server for the sessions it has seen.
    writeFileSync(path.join(ws.home, 'config.yaml'), config(true));
    await waitUntil(async () => (await typescript()).state === 'ready', 120_000);
    // Warm-up: the project loads (cold), then the file is known on both sides.
    for (let round = 0; round < 4; round++) await edit(round);
    const ours: number[] = [];
    const tsc: number[] = [];
    let seen = 0;
    for (let round = 0; round < ROUNDS * 2; round++) {
      const { ms, found } = await edit(round);
      ours.push(ms);
      if (found) seen++;
      if (round % 2) continue;
      const start = process.hrtime.bigint();
      await execa(process.execPath, [TSC, '--noEmit', '-p', ws.repo], { reject: false });
      tsc.push(elapsedMs(start));
    }
    writeFileSync(path.join(ws.repo, 'src/main.ts'), original);
    const server = await typescript();
    const warmRss = rssMiB(daemon.pid);
    return [
      {
        name: 'edit_file with its diagnostics, warm typescript-language-server (daemon)',
        ours: median(ours),
        baseline: median(tsc),
        baselineName: 'tsc --noEmit, cold, same project',
        unit: 'ms',
        ratio: median(ours) / median(tsc),
        goal: '<= 0.1x',
        notes: `the whole call as the turn reports it (edit, old text, new text, diagnostics); ${seen} of ${ROUNDS} breaking edits returned TS2322; medians of ${ROUNDS * 2} calls and ${ROUNDS} tsc runs`,
      },
      {
        name: 'daemon RSS with one warm TypeScript server',
        ours: warmRss,
        baseline: offRss,
        baselineName: 'the same daemon, same turns, lsp off',
        unit: 'MiB',
        ratio: warmRss / offRss,
        goal: '<= base + 40',
        notes: `the server's own processes (typescript-language-server and its tsservers): ${groupRssMiB(server.pid!).toFixed(0)} MiB more`,
      },
    ];
  } finally {
    await llm.close();
    await ws.remove();
  }
};

/** The LSP worker's data for the flooding fake server in `root`. */
const floodData = (root: string, logs: string, mode: string): LspWorkerData => ({
  root,
  excluded: [],
  logsDir: logs,
  servers: [
    {
      name: 'fake',
      command: process.execPath,
      args: ['--import', tsx, FAKE, mode, String(FLOOD)],
      languages: { '.fake': 'fake' },
      source: 'yours',
    },
  ],
});

/** What the engine's thread went through while `flood` ran: its longest stall and busy time, ms. */
const mainThreadDuring = async (flood: () => Promise<void>) => {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  const before = performance.eventLoopUtilization();
  await flood();
  const busy = performance.eventLoopUtilization(before).active;
  histogram.disable();
  return { stall: histogram.max / 1e6, busy };
};

/** One flood (`mode` of the fake server) taken by the LSP worker, then by the same client on main. */
const flood = async (mode: 'flood' | 'flood-one') => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-bench-lsp-')));
  const root = path.join(base, 'ws');
  mkdirSync(root);
  const file = path.join(root, 'a.fake');
  writeFileSync(file, 'x\n');
  const data = floodData(root, path.join(base, 'logs'), mode);
  const over = (text: string) => text.includes('the flood is over');
  const deadline = () => Date.now() + 60_000;
  const worker: { stall: number; busy: number }[] = [];
  const main: { stall: number; busy: number }[] = [];
  try {
    for (let round = 0; round < 3; round++) {
      const host = await LspHost.start(data);
      worker.push(
        await mainThreadDuring(async () => {
          await host.start([{ name: 'fake', warmFile: file }]);
          const answer = () => host.query({ operation: 'diagnostics' }, deadline(), 500);
          await waitUntil(async () => over(await answer().catch(() => '')), 60_000);
        }),
      );
      await host.close();
      const manager = new LspManager(data, () => {});
      main.push(
        await mainThreadDuring(async () => {
          manager.start([{ name: 'fake', warmFile: file }]);
          const answer = () => manager.query({ operation: 'diagnostics' }, deadline());
          await waitUntil(async () => over(await answer().catch(() => '')), 60_000);
        }),
      );
      await manager.shutdown();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  const of = (list: { stall: number; busy: number }[], key: 'stall' | 'busy') =>
    median(list.map((m) => m[key]));
  return {
    worker: (key: 'stall' | 'busy') => of(worker, key),
    main: (key: 'stall' | 'busy') => of(main, key),
  };
};

/** The flood rows: one 26 MB message (the longest stall), and 200 of 130 KB (busy time). */
const floodRows = async (): Promise<BenchResult[]> => {
  const one = await flood('flood-one');
  const many = await flood('flood');
  const row = (
    name: string,
    taken: typeof one,
    key: 'stall' | 'busy',
    notes: string,
  ): BenchResult => ({
    name,
    ours: taken.worker(key),
    baseline: taken.main(key),
    baselineName: 'the same client on the main thread',
    unit: 'ms',
    ratio: taken.worker(key) / taken.main(key),
    goal: '<= 0.2x',
    notes,
  });
  return [
    row(
      'longest stall of the engine thread, one 26 MB diagnostics message',
      one,
      'stall',
      `publishDiagnostics of ${FLOOD * 1000} diagnostics; median of 3`,
    ),
    row(
      'engine thread busy while a server floods diagnostics',
      many,
      'busy',
      `${FLOOD} publishDiagnostics of 1000 (~130 KB each); event-loop active time, median of 3`,
    ),
  ];
};

const bench: Bench = async () => [...(await editRows()), ...(await floodRows())];
export default bench;
