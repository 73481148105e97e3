import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Worker } from 'node:worker_threads';
import { WORKER_YOUNG_GENERATION_MB } from '../src/main/threads/entry.ts';
import { McpHost } from '../src/main/threads/mcp.ts';
import {
  callsPerSecond,
  median,
  percentile,
  sequentialTimes,
  serverBin,
  type Bench,
  type Call,
} from './harness.ts';

// server-everything's `echo`, called by the raw SDK client and through the MCP worker (McpHost →
// MessagePort → worker → SDK client), in the same run against copies of the same server; and,
// as the floor of that design, through a bare worker thread: the same SDK client in a worker that
// does nothing but call it for each message from main and post the result back.
const everything = serverBin('server-everything');
const WARM_UP = 2_000;
const ROUNDS = 7;
const SEQUENTIAL = 500;
// Sustained throughput: rounds long enough (about a second) for the three parties — main, the
// worker, the server — to settle into working side by side; a short burst (the second row) mostly
// measures threads waking up after the other side's round.
const SUSTAINED = 20_000;
const BURST = 2_000;
const IN_FLIGHT = 8;
const CONTENDED_ROUNDS = 3;

/**
 * The median of the ratios of rounds run back to back: the machine's speed drifts more between
 * rounds than between the two halves of one (raw rates of one run range over ±10 %).
 */
const pairedRatio = (ours: number[], raw: number[]): number =>
  median(ours.map((rate, i) => rate / raw[i]!));

const sequential = sequentialTimes;

/** CPU time of this process (every thread, the MCP worker's too) per call, in µs, by round. */
const cpuPerCall = new Map<Call, number[]>();

/** Calls per second with `IN_FLIGHT` calls always outstanding, over `count` calls. */
const throughput = async (call: Call, count: number): Promise<number> => {
  const cpu = process.cpuUsage();
  const rate = await callsPerSecond(call, count, IN_FLIGHT);
  const used = process.cpuUsage(cpu);
  cpuPerCall.set(call, [...(cpuPerCall.get(call) ?? []), (used.user + used.system) / count]);
  return rate;
};

/**
 * A worker thread with the SDK's client to its own copy of the server, answering each message
 * from main with the tool's result — the thread hop alone, none of niffler's work — and a call
 * through it. Same worker settings as niffler's (young generation).
 */
const bareWorker = async (): Promise<{ call: Call; close: () => Promise<number> }> => {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
    (async () => {
      const { Client } = await import('@modelcontextprotocol/client');
      const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
      const client = new Client({ name: 'bare', version: '0' });
      await client.connect(new StdioClientTransport({ command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(everything)}], stderr: 'ignore' }));
      parentPort.on('message', ({ id, args }) => {
        client.callTool({ name: 'echo', arguments: args }).then((result) => parentPort.postMessage({ id, result }));
      });
      parentPort.postMessage('ready');
    })();`,
    { eval: true, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } },
  );
  await once(worker, 'message');
  const pending = new Map<number, () => void>();
  let next = 0;
  worker.on('message', ({ id }: { id: number }) => {
    pending.get(id)?.();
    pending.delete(id);
  });
  const call: Call = () =>
    new Promise<void>((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      worker.postMessage({ id, args: { message: 'hi' } });
    });
  return { call, close: () => worker.terminate() };
};

const bench: Bench = async () => {
  const raw = new Client({ name: 'bench', version: '0' });
  await raw.connect(
    new StdioClientTransport({ command: process.execPath, args: [everything], stderr: 'ignore' }),
  );
  const rawCall: Call = () => raw.callTool({ name: 'echo', arguments: { message: 'hi' } });

  const dir = mkdtempSync(path.join(tmpdir(), 'niffler-bench-'));
  const host = await McpHost.start({
    servers: [
      {
        name: 'everything',
        displayName: 'everything',
        transport: 'stdio',
        command: process.execPath,
        args: [everything],
        timeoutMs: 30_000,
        startupTimeoutMs: 30_000,
        maxConcurrency: IN_FLIGHT,
        autoStart: true,
        gate: 'startable',
      },
    ],
    root: dir,
    roots: [dir],
    logsDir: path.join(dir, 'logs'),
    outputsDir: path.join(dir, 'outputs'),
    logLevel: 'warning',
  });
  await host.waitForStatus('everything', (s) => s.state === 'ready');
  const bare = await bareWorker();
  const bareCall = bare.call;
  const ourCall: Call = async () => {
    const result = await host.callTool('everything__echo', { message: 'hi' });
    if (!result.ok) throw new Error(result.error.message);
  };

  try {
    // Both sides (and both servers, which JIT-compile too) are warmed up alike, sequentially and
    // concurrently; then rounds alternate so machine noise hits both alike.
    for (const call of [rawCall, ourCall, bareCall]) {
      await sequential(call, WARM_UP);
      await throughput(call, SUSTAINED);
    }
    cpuPerCall.clear();
    const rawTimes: number[] = [];
    const ourTimes: number[] = [];
    const rawRates: number[] = [];
    const ourRates: number[] = [];
    const rawBursts: number[] = [];
    const ourBursts: number[] = [];
    const bareRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rawTimes.push(...(await sequential(rawCall, SEQUENTIAL)));
      ourTimes.push(...(await sequential(ourCall, SEQUENTIAL)));
      rawRates.push(await throughput(rawCall, SUSTAINED));
      ourRates.push(await throughput(ourCall, SUSTAINED));
      bareRates.push(await throughput(bareCall, SUSTAINED));
      rawBursts.push(await throughput(rawCall, BURST));
      ourBursts.push(await throughput(ourCall, BURST));
    }
    const rawRate = median(rawRates);
    const ourRate = median(ourRates);
    const rawCpu = median(cpuPerCall.get(rawCall)!);
    const ourCpu = median(cpuPerCall.get(ourCall)!);
    // The same sustained rounds with one core kept busy by another process (a build, a local model
    // generating): four threads (main, the worker, the server, the spinner) on two cores here.
    const hog = spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' });
    await once(hog, 'spawn');
    const rawBusy: number[] = [];
    const ourBusy: number[] = [];
    const bareBusy: number[] = [];
    try {
      for (let round = 0; round < CONTENDED_ROUNDS; round++) {
        rawBusy.push(await throughput(rawCall, SUSTAINED));
        ourBusy.push(await throughput(ourCall, SUSTAINED));
        bareBusy.push(await throughput(bareCall, SUSTAINED));
      }
    } finally {
      hog.kill('SIGKILL');
      await once(hog, 'exit');
    }
    const p = (times: number[], q: number) => percentile(times, q);
    return [
      {
        name: 'mcp echo call p50 (sequential)',
        ours: p(ourTimes, 50),
        baseline: p(rawTimes, 50),
        baselineName: 'raw SDK client',
        unit: 'µs',
        ratio: p(ourTimes, 50) / p(rawTimes, 50),
        goal: '<= raw + 150 µs',
        notes: `overhead ${Math.round(p(ourTimes, 50) - p(rawTimes, 50))} µs`,
      },
      {
        name: 'mcp echo call p95 (sequential)',
        ours: p(ourTimes, 95),
        baseline: p(rawTimes, 95),
        baselineName: 'raw SDK client',
        unit: 'µs',
        ratio: p(ourTimes, 95) / p(rawTimes, 95),
      },
      {
        name: `mcp echo calls/s (concurrency ${IN_FLIGHT})`,
        ours: ourRate,
        baseline: rawRate,
        baselineName: 'raw SDK client',
        unit: 'calls/s',
        ratio: pairedRatio(ourRates, rawRates),
        higherIsBetter: true,
        goal: '>= 0.85x',
        notes: `medians of ${ROUNDS} rounds of ${SUSTAINED} calls; ratio: median of the rounds' ratios`,
      },
      {
        name: `mcp echo calls/s through a bare worker thread (concurrency ${IN_FLIGHT})`,
        ours: median(bareRates),
        baseline: rawRate,
        baselineName: 'raw SDK client',
        unit: 'calls/s',
        ratio: pairedRatio(bareRates, rawRates),
        higherIsBetter: true,
        notes: 'the floor of a dedicated MCP thread: the SDK client in a worker, nothing else',
      },
      {
        name: `mcp echo calls/s, niffler against the bare worker thread (concurrency ${IN_FLIGHT})`,
        ours: ourRate,
        baseline: median(bareRates),
        baselineName: 'bare worker thread',
        unit: 'calls/s',
        ratio: pairedRatio(ourRates, bareRates),
        higherIsBetter: true,
        notes: "what niffler's own work per call costs beyond the thread hop",
      },
      {
        name: `mcp echo CPU per call (concurrency ${IN_FLIGHT}, client side)`,
        ours: ourCpu,
        baseline: rawCpu,
        baselineName: 'raw SDK client',
        unit: 'µs',
        ratio: ourCpu / rawCpu,
        notes: 'this process, all threads; the server not counted',
      },
      {
        name: `mcp echo calls/s, one core busy elsewhere (concurrency ${IN_FLIGHT})`,
        ours: median(ourBusy),
        baseline: median(rawBusy),
        baselineName: 'raw SDK client',
        unit: 'calls/s',
        ratio: pairedRatio(ourBusy, rawBusy),
        higherIsBetter: true,
        goal: '>= 0.85x',
        notes: `median of ${CONTENDED_ROUNDS} rounds of ${SUSTAINED} calls beside a busy loop`,
      },
      {
        name: `mcp echo calls/s through a bare worker thread, one core busy elsewhere (concurrency ${IN_FLIGHT})`,
        ours: median(bareBusy),
        baseline: median(rawBusy),
        baselineName: 'raw SDK client',
        unit: 'calls/s',
        ratio: pairedRatio(bareBusy, rawBusy),
        higherIsBetter: true,
        notes: 'the floor of a dedicated MCP thread beside a busy loop',
      },
      {
        name: `mcp echo calls/s, bursts (concurrency ${IN_FLIGHT})`,
        ours: median(ourBursts),
        baseline: median(rawBursts),
        baselineName: 'raw SDK client',
        unit: 'calls/s',
        ratio: pairedRatio(ourBursts, rawBursts),
        higherIsBetter: true,
        notes: `median of ${ROUNDS} bursts of ${BURST} calls, each right after the other side's`,
      },
    ];
  } finally {
    await host.close();
    await bare.close();
    await raw.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
export default bench;
