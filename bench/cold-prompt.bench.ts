import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { nifflerPaths } from '../src/main/paths.ts';
import { reply } from '../test/fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../test/fixtures/fake-llm/server.ts';
import { codexConfig, codexEnv, findCodex, startFakeResponses } from './codex.ts';
import {
  benchWorkspace,
  fakeModelLines,
  median,
  serverBin,
  type Bench,
  type BenchResult,
  promptToModel,
} from './harness.ts';

// A cold `niffler -p` (no daemon yet) with three stdio servers (server-everything, -filesystem,
// -memory): from starting the command to the model's receiving its first request, against Codex
// (a native binary; see codex.ts) doing the same in the same run, interleaved:
// - with the servers' catalogs kept from their last run (the second cold start in a repository
//   onwards): the request is built from them while the servers start. Goal ≤ 0.6× Codex.
// - on the very first start (no kept catalog): the servers are waited for. Goal ≤ 1.0× Codex.
// - on the very first start with MCP tools deferred (`tools.search: always`): the first request
//   waits for no server, as Codex's does not (its first request goes without the servers' tools when
//   they are not up yet: 12 tools, none of theirs, measured with Codex 0.169 on this bench). The
//   like-for-like comparison of a first start.
// - the floor of a first start that waits for its servers, no niffler in it: a Node process
//   starting a detached Node process that spawns the servers with the raw SDK client, lists their
//   tools and POSTs (bench/fixtures/floor-first-start.mjs).
// - the floor of this design, no niffler in it: a Node process starting a detached Node process
//   that POSTs the request (front-end → daemon → request), interleaved too. Node's own start, twice
//   in a row, is most of Codex's time: where a goal against Codex is out of reach, this row says how
//   far niffler is from what its shape allows.
// And the cold start's timeline (NIFFLER_TIMELINE; src/workers/shared/timeline.ts): each step's
// median time from the front-end's process start, with the catalogs kept.

const ROUNDS = 5;

/** The steps of the timeline, in the order they are reported (the servers' readiness: the last). */
const STEPS = [
  'daemon spawned',
  'daemon process started',
  'daemon code loaded',
  'config read',
  'first server spawned',
  'daemon listening',
  'prompt received',
  'API worker ready',
  'request sent to the API worker',
];

const bench: Bench = async () => {
  const llm = await startFakeLlm({ fallback: reply().text('ok') });
  const responses = await startFakeResponses();
  const servers = (base: string) => [
    {
      name: 'everything',
      command: process.execPath,
      args: [serverBin('server-everything'), 'stdio'],
    },
    { name: 'filesystem', command: process.execPath, args: [serverBin('server-filesystem'), base] },
    {
      name: 'memory',
      command: process.execPath,
      args: [serverBin('server-memory')],
      env: { MEMORY_FILE_PATH: path.join(base, 'memory.jsonl') },
    },
  ];
  /** The global config: the fake model, the three servers, and `extra` lines. */
  const config = (base: string, ...extra: string[]) =>
    [
      ...fakeModelLines(llm.url, 'contextWindow: 32000'),
      ...extra,
      'mcpServers:',
      ...servers(base).map(
        (s) =>
          `  ${s.name}: { command: ${JSON.stringify(s.command)}, args: ${JSON.stringify(s.args)}${s.env ? `, env: ${JSON.stringify(s.env)}` : ''} }`,
      ),
      '',
    ].join('\n');
  const ws = benchWorkspace((base) => config(base));
  const codex = await findCodex();
  const codexHome = path.join(ws.base, 'codex-home');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(responses.url, servers(ws.base)));
  const timeline = path.join(ws.base, 'timeline');
  const catalogs = nifflerPaths(ws.repo, ws.env).catalogsDir;
  // The same servers, their tools deferred behind tool search: a first start waits for none.
  const deferring = benchWorkspace((base) => config(base, 'tools:', '  search: always'));
  /** ms from starting niffler -p on a first start (no kept catalog), tools deferred. */
  const deferredRun = async () => {
    await deferring.niffler(['daemon', 'stop']);
    rmSync(nifflerPaths(deferring.repo, deferring.env).catalogsDir, {
      recursive: true,
      force: true,
    });
    const { ms } = await promptToModel(deferring, llm, { env: deferring.env, reject: false });
    await deferring.niffler(['mcp', 'status', '--wait']);
    return ms;
  };
  /** The floor of a first start that waits for its servers (see above), ms to the request. */
  const floorFirstRun = async () => {
    const seen = llm.requests.length;
    const script = path.resolve('bench/fixtures/floor-first-start.mjs');
    const args = [script, JSON.stringify(servers(ws.base)), llm.url];
    const front = `require('node:child_process').spawn(process.execPath, ${JSON.stringify(args)}, { detached: true, stdio: 'ignore', cwd: ${JSON.stringify(process.cwd())} }).unref()`;
    const start = performance.timeOrigin + performance.now();
    await execa(process.execPath, ['-e', front], { stdin: 'ignore' });
    await llm.waitForRequests(seen + 1);
    return performance.timeOrigin + performance.now() - start;
  };

  /** ms from starting niffler -p, cold, to the model's request; with the timeline of the run. */
  const niffler = async (kept: boolean) => {
    await ws.niffler(['daemon', 'stop']);
    if (!kept) rmSync(catalogs, { recursive: true, force: true });
    rmSync(timeline, { force: true });
    const { ms } = await promptToModel(ws, llm, {
      env: { ...ws.env, NIFFLER_TIMELINE: timeline },
      reject: false,
    });
    // The servers' readiness is part of the timeline: wait for it before the next round.
    await ws.niffler(['mcp', 'status', '--wait']);
    return { ms, steps: readSteps(timeline) };
  };
  /**
   * The floor of this design's cold path, no niffler in it: a Node process (the front-end) that
   * starts a detached Node process (the daemon), which POSTs the request with fetch. ms from
   * starting the first to the fake's receiving the request.
   */
  const floorRun = async () => {
    const seen = llm.requests.length;
    const post = `fetch(${JSON.stringify(`${llm.url}/v1/chat/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'fake-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }) }).then((r) => r.text())`;
    const front = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(post)}], { detached: true, stdio: 'ignore' }).unref()`;
    const start = performance.timeOrigin + performance.now();
    await execa(process.execPath, ['-e', front], { stdin: 'ignore' });
    await llm.waitForRequests(seen + 1);
    return performance.timeOrigin + performance.now() - start;
  };
  /** ms from starting codex exec to the fake's receiving its first request. */
  const codexRun = async (binary: string) => {
    const seen = responses.arrivals.length;
    const start = performance.timeOrigin + performance.now();
    await execa(binary, ['exec', '--skip-git-repo-check', '-s', 'read-only', 'hi'], {
      cwd: ws.repo,
      env: codexEnv(ws.env, codexHome),
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
    });
    const arrival = responses.arrivals[seen];
    return arrival === undefined ? Number.NaN : arrival - start;
  };

  const kept: number[] = [];
  const first: number[] = [];
  const theirs: number[] = [];
  const floor: number[] = [];
  const deferred: number[] = [];
  const floorFirst: number[] = [];
  const steps = new Map<string, number[]>();
  try {
    // Warm-up: the page cache, the code caches, and a first run that keeps the catalogs.
    await niffler(false);
    await deferredRun();
    if ('binary' in codex) await codexRun(codex.binary);
    for (let round = 0; round < ROUNDS; round++) {
      const withKept = await niffler(true);
      kept.push(withKept.ms);
      for (const [step, at] of withKept.steps) steps.set(step, [...(steps.get(step) ?? []), at]);
      first.push((await niffler(false)).ms);
      if ('binary' in codex) theirs.push(await codexRun(codex.binary));
      floor.push(await floorRun());
      deferred.push(await deferredRun());
      floorFirst.push(await floorFirstRun());
    }
  } finally {
    await ws.remove();
    await deferring.remove();
    await llm.close();
    await responses.close();
  }
  return rows({ kept, first, theirs, floor, deferred, floorFirst }, steps, codex);
};

/** The timeline of a run: each step's first time, in ms from the front-end's start. */
const readSteps = (file: string): Map<string, number> => {
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  const marks = lines.map((line) => {
    const [time, , ...step] = line.split(' ');
    return { time: Number(time), step: step.join(' ') };
  });
  const origin = marks.find((m) => m.step === 'front-end started')?.time ?? Number.NaN;
  const steps = new Map<string, number>();
  for (const { time, step } of marks) {
    const name = step.startsWith('server ready') ? 'servers ready (the last)' : step;
    if (name === 'servers ready (the last)')
      steps.set(name, Math.max(steps.get(name) ?? 0, time - origin));
    else if (!steps.has(name)) steps.set(name, time - origin);
  }
  return steps;
};

const rows = (
  {
    kept,
    first,
    theirs,
    floor,
    deferred,
    floorFirst,
  }: Record<'kept' | 'first' | 'theirs' | 'floor' | 'deferred' | 'floorFirst', number[]>,
  steps: Map<string, number[]>,
  codex: Awaited<ReturnType<typeof findCodex>>,
): BenchResult[] => {
  const request = median(kept);
  const reference = 'binary' in codex && theirs.length ? median(theirs) : undefined;
  if (reference === undefined)
    process.stderr.write(
      `  cold-prompt: the Codex rows are skipped: ${'skipped' in codex ? codex.skipped : 'Codex sent no request'}\n`,
    );
  const against = (name: string, ours: number[], goal: string): BenchResult =>
    reference === undefined
      ? {
          name,
          ours: median(ours),
          baseline: median(first),
          baselineName: 'niffler, first start (no Codex to compare)',
          unit: 'ms',
          ratio: median(ours) / median(first),
          notes: `Codex row skipped: ${'skipped' in codex ? codex.skipped : 'no request'}`,
        }
      : {
          name,
          ours: median(ours),
          baseline: reference,
          baselineName: 'Codex exec, cold (native)',
          unit: 'ms',
          ratio: median(ours) / reference,
          goal,
          notes: `${ROUNDS} rounds interleaved; min ours ${Math.min(...ours).toFixed(0)} ms, min Codex ${Math.min(...theirs).toFixed(0)} ms`,
        };
  const timeline = [...STEPS, 'servers ready (the last)']
    .filter((step) => steps.has(step))
    .map((step): BenchResult => ({
      name: `cold timeline (catalogs kept): ${step}`,
      ours: median(steps.get(step)!),
      baseline: request,
      baselineName: 'the first model request',
      unit: 'ms',
      ratio: median(steps.get(step)!) / request,
      notes: 'ms from the front-end process start',
    }));
  return [
    against(
      'cold -p, catalogs kept: start to the first model request (3 servers)',
      kept,
      '<= 0.6x',
    ),
    against(
      'cold -p, first start in a repository: start to the first model request',
      first,
      '<= 1.0x',
    ),
    against(
      'cold -p, first start, MCP tools deferred (tools.search: always; Codex sends without them too)',
      deferred,
      '<= 1.0x',
    ),
    {
      name: 'cold -p, first start, against the floor of waiting for its servers',
      ours: median(first),
      baseline: median(floorFirst),
      baselineName: 'node starting a detached node: SDK, 3 servers listed, POST',
      unit: 'ms',
      ratio: median(first) / median(floorFirst),
      notes: `the floor: the servers spawned and listed by the raw SDK client, then the request; no niffler (min ${Math.min(...floorFirst).toFixed(0)} ms)${reference === undefined ? '' : `; that floor is ${(median(floorFirst) / reference).toFixed(2)}x Codex, which does not wait for the servers`}`,
    },
    {
      name: 'cold -p, catalogs kept, against the floor of its design',
      ours: request,
      baseline: median(floor),
      baselineName: 'node starting a detached node that POSTs',
      unit: 'ms',
      ratio: request / median(floor),
      notes: `the floor: two Node processes in a row and one fetch, no niffler (min ${Math.min(...floor).toFixed(0)} ms)${reference === undefined ? '' : `; the floor is ${(median(floor) / reference).toFixed(2)}x Codex`}`,
    },
    ...timeline,
  ];
};

export default bench;
