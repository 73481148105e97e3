import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  benchWorkspace,
  callsPerSecond,
  median,
  percentile,
  sequentialTimes,
  serverBin,
  type Bench,
  type Call,
} from './harness.ts';
import { fetchWithOwnSignal } from '../src/workers/shared/own-signal-fetch.ts';

// server-everything's `echo` called by an SDK client (v2) through the gateway — the consumer →
// `niffler mcp serve` (stdio: the front-end relaying to the daemon; --http: the daemon itself) →
// the daemon's MCP worker → the server — and, in the same run, by the same client straight on a
// copy of the same server over stdio. And the floors of that shape, each with its own copy of the
// server: a bare byte relay (consumer → a process joining stdio to a socket → a process joining
// the socket to the server, nothing parsed) and a bare HTTP forwarder (consumer → an HTTP server
// writing each POSTed message to the server's stdin): what any gateway between a consumer and a
// daemon's servers costs before it does anything.
const everything = serverBin('server-everything');
const WARM_UP = 500;
const ROUNDS = 5;
const SEQUENTIAL = 300;
const CONCURRENT = 3_000;
const IN_FLIGHT = 8;

const client = () => new Client({ name: 'bench', version: '0' });

/**
 * The HTTP clients' fetch, as niffler's own HTTP MCP clients have it (createTransport): with the
 * plain one, the SDK's transport hands its lifetime signal to every 2025-era request and undici
 * leaves a listener on it per request until a GC — thousands here, and past 1500 a
 * MaxListenersExceededWarning with its stack per call, in the timed loops (own-signal-fetch.ts).
 */
const httpFetch = fetchWithOwnSignal();

const echo =
  (c: Client, name: string): Call =>
  async () => {
    const result = await c.callTool({ name, arguments: { message: 'hi' } });
    if (result.isError) throw new Error(JSON.stringify(result.content));
  };

const sequential = sequentialTimes;
const throughput = (call: Call, count: number) => callsPerSecond(call, count, IN_FLIGHT);

/** `niffler mcp serve --http --json` in the workspace: its URL and token, and how to stop it. */
const httpGateway = async (ws: ReturnType<typeof benchWorkspace>) => {
  const child = spawn(
    process.execPath,
    [path.resolve('dist/cli.cjs'), 'mcp', 'serve', '--http', '--json'],
    {
      cwd: ws.repo,
      env: ws.env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  const listening = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.trimEnd().endsWith('}')) resolve(JSON.parse(out) as never);
    });
    child.once('exit', (code) => reject(new Error(`niffler mcp serve --http exited ${code}`)));
  });
  return {
    ...listening,
    stop: async () => {
      child.kill('SIGINT');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
};

/** A bench fixture (bench/fixtures/NAME.mjs) forked; resolves with its first message. */
const forkFixture = async (
  name: string,
  args: string[],
): Promise<{ child: ChildProcess; said: unknown }> => {
  const child = fork(path.resolve(`bench/fixtures/${name}.mjs`), args, { stdio: 'inherit' });
  const [said] = (await once(child, 'message')) as [unknown];
  return { child, said };
};

const bench: Bench = async () => {
  const ws = benchWorkspace(
    () =>
      `mcpServers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(everything)}, stdio]\n    maxConcurrency: ${IN_FLIGHT}\n`,
  );
  const direct = client();
  const viaStdio = client();
  const viaHttp = client();
  const viaBareRelay = client();
  const viaBareHttp = client();
  const floors: ChildProcess[] = [];
  let gateway: Awaited<ReturnType<typeof httpGateway>> | undefined;
  try {
    const socket = path.join(ws.base, 'bare.sock');
    const server = [process.execPath, everything, 'stdio'];
    const bareDaemon = await forkFixture('bare-daemon', [socket, ...server]);
    const bareHttp = await forkFixture('bare-http', server);
    floors.push(bareDaemon.child, bareHttp.child);
    await viaBareRelay.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [path.resolve('bench/fixtures/bare-relay.mjs'), socket],
        stderr: 'inherit',
      }),
    );
    await viaBareHttp.connect(
      new StreamableHTTPClientTransport(
        new URL(`http://127.0.0.1:${bareHttp.said as number}/mcp`),
        { fetch: httpFetch },
      ),
    );
    await direct.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [everything, 'stdio'],
        stderr: 'ignore',
      }),
    );
    await viaStdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [path.resolve('dist/cli.cjs'), 'mcp', 'serve', '-C', ws.repo],
        env: ws.env,
        stderr: 'inherit',
      }),
    );
    gateway = await httpGateway(ws);
    await viaHttp.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url), {
        requestInit: { headers: { Authorization: `Bearer ${gateway.token}` } },
        fetch: httpFetch,
      }),
    );
    // The gateway's first tools/list waits for the server to be ready.
    await viaStdio.listTools();
    const calls = {
      direct: echo(direct, 'echo'),
      stdio: echo(viaStdio, 'everything__echo'),
      http: echo(viaHttp, 'everything__echo'),
      bareRelay: echo(viaBareRelay, 'echo'),
      bareHttp: echo(viaBareHttp, 'echo'),
    };
    const sides = Object.keys(calls) as (keyof typeof calls)[];
    for (const side of sides) {
      await sequential(calls[side], WARM_UP);
      await throughput(calls[side], CONCURRENT);
    }
    const times = Object.fromEntries(sides.map((side) => [side, [] as number[]])) as Record<
      keyof typeof calls,
      number[]
    >;
    const rates = Object.fromEntries(sides.map((side) => [side, [] as number[]])) as Record<
      keyof typeof calls,
      number[]
    >;
    // Rounds alternate the sides, so that machine noise hits them alike.
    for (let round = 0; round < ROUNDS; round++)
      for (const side of sides) {
        times[side].push(...(await sequential(calls[side], SEQUENTIAL)));
        rates[side].push(await throughput(calls[side], CONCURRENT));
      }
    const p50 = (side: keyof typeof calls) => percentile(times[side], 50);
    const p95 = (side: keyof typeof calls) => percentile(times[side], 95);
    const rate = (side: keyof typeof calls) => median(rates[side]);
    // Each round's rate against the direct one of the same round, then the median.
    const pairedRatio = (side: keyof typeof calls) =>
      median(rates[side].map((r, i) => r / rates.direct[i]!));
    const eras = `consumer protocol ${viaStdio.getNegotiatedProtocolVersion()} (stdio), ${viaHttp.getNegotiatedProtocolVersion()} (HTTP); direct ${direct.getNegotiatedProtocolVersion()}`;
    const baseline = { baselineName: 'same client, server direct (stdio)', unit: 'µs' };
    return [
      {
        name: 'gateway echo call p50, stdio (sequential)',
        ours: p50('stdio'),
        baseline: p50('direct'),
        ...baseline,
        ratio: p50('stdio') / p50('direct'),
        goal: '<= 2x',
        notes: `${ROUNDS}×${SEQUENTIAL} calls; ${eras}`,
      },
      {
        name: 'bare byte relay echo call p50, stdio (sequential)',
        ours: p50('bareRelay'),
        baseline: p50('direct'),
        ...baseline,
        ratio: p50('bareRelay') / p50('direct'),
        notes: 'the floor of a stdio gateway: two processes joining bytes, nothing parsed',
      },
      {
        name: 'gateway echo call p50, stdio, against the bare byte relay (sequential)',
        ours: p50('stdio'),
        baseline: p50('bareRelay'),
        ...baseline,
        baselineName: 'bare byte relay',
        ratio: p50('stdio') / p50('bareRelay'),
      },
      {
        name: 'gateway echo call p95, stdio (sequential)',
        ours: p95('stdio'),
        baseline: p95('direct'),
        ...baseline,
        ratio: p95('stdio') / p95('direct'),
      },
      {
        name: 'gateway echo call p50, HTTP (sequential)',
        ours: p50('http'),
        baseline: p50('direct'),
        ...baseline,
        ratio: p50('http') / p50('direct'),
        goal: '<= 2x',
      },
      {
        name: 'bare HTTP forwarder echo call p50 (sequential)',
        ours: p50('bareHttp'),
        baseline: p50('direct'),
        ...baseline,
        ratio: p50('bareHttp') / p50('direct'),
        notes: 'the floor of an HTTP gateway: the same client over HTTP to a forwarder, no checks',
      },
      {
        name: 'gateway echo call p50, HTTP, against the bare HTTP forwarder (sequential)',
        ours: p50('http'),
        baseline: p50('bareHttp'),
        ...baseline,
        baselineName: 'bare HTTP forwarder',
        ratio: p50('http') / p50('bareHttp'),
      },
      {
        name: `gateway echo calls/s, stdio (concurrency ${IN_FLIGHT})`,
        ours: rate('stdio'),
        baseline: rate('direct'),
        ...baseline,
        unit: 'calls/s',
        ratio: pairedRatio('stdio'),
        higherIsBetter: true,
        notes: `medians of ${ROUNDS} rounds of ${CONCURRENT} calls; ratio: median of the rounds' ratios`,
      },
      {
        name: `gateway echo calls/s, HTTP (concurrency ${IN_FLIGHT})`,
        ours: rate('http'),
        baseline: rate('direct'),
        ...baseline,
        unit: 'calls/s',
        ratio: pairedRatio('http'),
        higherIsBetter: true,
      },
    ];
  } finally {
    await Promise.allSettled(
      [direct, viaStdio, viaHttp, viaBareRelay, viaBareHttp].map((c) => c.close()),
    );
    await gateway?.stop();
    for (const floor of floors) floor.kill();
    await ws.remove();
  }
};
export default bench;
