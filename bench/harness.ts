import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { waitUntil } from '../src/main/daemon/lifecycle.ts';
import { testEnv } from '../test/fixtures/env.ts';
import type { FakeLlm } from '../test/fixtures/fake-llm/server.ts';

/** One line of the bench table: our figure, its baseline measured in the same run, and the ratio. */
export interface BenchResult {
  name: string;
  ours: number;
  baseline: number;
  baselineName: string;
  unit: string;
  /** `ours / baseline`; for throughput (higher is better) the file sets `higherIsBetter`. */
  ratio: number;
  higherIsBetter?: boolean;
  goal?: string;
  notes?: string;
}

/** A bench file's default export. */
export type Bench = () => Promise<BenchResult[]>;

export const median = (values: number[]): number => percentile(values, 50);

export const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
};

/** Wall-clock milliseconds of one whole command, start to exit. */
export const timeCommand = async (
  file: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<number> => {
  const start = process.hrtime.bigint();
  // Given an env, the command gets exactly it (see test/fixtures/env.ts).
  await execa(file, args, {
    ...(options.env ? { env: options.env, extendEnv: false } : {}),
    cwd: options.cwd,
    stdio: 'ignore',
  });
  return Number(process.hrtime.bigint() - start) / 1e6;
};

/**
 * Runs two commands interleaved `runs` times (after one warm-up each) so machine noise hits both
 * alike; returns the medians in ms.
 */
export const compareCommands = async (
  ours: () => Promise<number>,
  baseline: () => Promise<number>,
  runs = 15,
): Promise<{ ours: number; baseline: number }> => {
  await ours();
  await baseline();
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(await ours());
    b.push(await baseline());
  }
  return { ours: median(a), baseline: median(b) };
};

export { serverBin } from '../test/fixtures/mcp/servers.ts';

/** Where benches build their baselines' bundles (kept between runs, ignored by git). */
export const benchCacheDir = path.resolve('node_modules/.cache/niffler-bench');

/** A temp HOME, NIFFLER_HOME and git repository for a bench, and the built CLI run in it. */
export interface BenchWorkspace {
  base: string;
  repo: string;
  home: string;
  /** The environment niffler gets: the workspace's homes, no NIFFLER_* from the shell. */
  env: Record<string, string>;
  /** Runs `dist/cli.cjs ARGS` in the repository, never throwing. */
  niffler: (args: string[]) => Promise<unknown>;
  /** Stops the workspace's daemon and removes the directories. */
  remove: () => Promise<void>;
}

export const benchWorkspace = (globalConfig: (base: string) => string): BenchWorkspace => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-bench-')));
  const repo = path.join(base, 'repo');
  const home = path.join(base, 'h');
  mkdirSync(path.join(repo, '.git'), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'config.yaml'), globalConfig(base));
  const env = testEnv({ HOME: base, NIFFLER_HOME: home });
  const niffler = (args: string[]) =>
    execa(process.execPath, [path.resolve('dist/cli.cjs'), ...args], {
      cwd: repo,
      env,
      extendEnv: false,
      reject: false,
    });
  return {
    base,
    repo,
    home,
    env,
    niffler,
    remove: async () => {
      await niffler(['daemon', 'stop']);
      rmSync(base, { recursive: true, force: true });
    },
  };
};

/**
 * The pid of the workspace's daemon once it has warmed itself and given back what that grew (its
 * log's `warmed;` line, daemon/settle.ts: 2 s after the warming with nobody attached); throws if
 * that does not come within 30 s.
 */
export const settledDaemon = async (ws: BenchWorkspace): Promise<number> => {
  const { stdout } = (await ws.niffler(['daemon', 'status', '--json'])) as { stdout: string };
  const { pid, logFile } = JSON.parse(stdout) as { pid: number; logFile: string };
  const settled = () => {
    try {
      return readFileSync(logFile, 'utf8').includes('"msg":"warmed;');
    } catch {
      return false;
    }
  };
  if (!(await waitUntil(settled, 30_000)))
    throw new Error(`the daemon did not settle within 30 s (no "warmed;" line in ${logFile})`);
  return pid;
};

/** A call a bench repeats. */
export type Call = () => Promise<unknown>;

/** Microseconds per call, made one at a time, `count` times. */
export const sequentialTimes = async (call: Call, count: number): Promise<number[]> => {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await call();
    times.push(Number(process.hrtime.bigint() - start) / 1e3);
  }
  return times;
};

/** Calls per second over `count` calls with `inFlight` of them always outstanding. */
export const callsPerSecond = async (
  call: Call,
  count: number,
  inFlight: number,
): Promise<number> => {
  let left = count;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (left-- > 0) await call();
    }),
  );
  return count / (Number(process.hrtime.bigint() - start) / 1e9);
};

/**
 * `niffler -p hi` in `ws`: ms from starting it to `llm`'s receiving its request, and that request
 * (the run is awaited too). `env` replaces the workspace's; `reject: false` lets the run fail.
 */
export const promptToModel = async (
  ws: BenchWorkspace,
  llm: FakeLlm,
  options: { env?: NodeJS.ProcessEnv; reject?: boolean } = {},
): Promise<{ ms: number; request: FakeLlm['requests'][number] }> => {
  const seen = llm.requests.length;
  const start = performance.now();
  const run = execa(process.execPath, [path.resolve('dist/cli.cjs'), '-p', 'hi'], {
    cwd: ws.repo,
    env: options.env ?? ws.env,
    extendEnv: false,
    stdin: 'ignore',
    reject: options.reject ?? true,
  });
  const [request] = (await llm.waitForRequests(seen + 1)).slice(seen);
  const ms = performance.now() - start;
  await run;
  return { ms, request: request! };
};

/** Config lines that make the fake model (test/fixtures/fake-llm at `url`) the workspace's model. */
export const fakeModelLines = (url: string, ...modelLines: string[]): string[] => [
  'model: fake',
  'models:',
  '  fake:',
  '    provider: openai',
  `    baseUrl: ${url}/v1`,
  '    model: fake-model',
  ...modelLines.map((line) => `    ${line}`),
];
