import { spawn } from 'node:child_process';
import path from 'node:path';
import { build } from 'esbuild';
import { benchCacheDir, benchWorkspace, median, type Bench, serverBin } from './harness.ts';
import { ownStringWidth, yogaWithoutFetch } from '../scripts/build-options.mjs';

const cli = path.resolve('dist/cli.cjs');

/**
 * Milliseconds from spawn until `marker` appears on the terminal. The command runs under
 * `script`, which gives it a pseudo-terminal (Ink's interactive path needs one), then is killed.
 */
const timeToText = (
  command: string,
  marker: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<number> =>
  new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...env, TERM: 'xterm-256color', COLUMNS: '100', LINES: '30', CI: undefined },
      cwd,
      stdio: ['pipe', 'pipe', 'ignore'],
      detached: true,
    });
    let seen = '';
    const timer = setTimeout(
      () =>
        finish(new Error(`"${marker}" did not appear within 20 s; output: ${seen.slice(-300)}`)),
      20_000,
    );
    const finish = (error?: Error) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      if (error) reject(error);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(marker)) {
        resolve(Number(process.hrtime.bigint() - start) / 1e6);
        finish();
      }
    });
  });

/** Time to the interactive session's first frame with a warm daemon, against a one-line Ink render. */
const bench: Bench = async () => {
  // Inside the project, so that what the bundle leaves external (react-devtools-core) resolves alike.
  const floorDir = benchCacheDir;
  const floor = path.join(floorDir, 'ink-hello.js');
  await build({
    entryPoints: [path.resolve('bench/fixtures/ink-hello.tsx')],
    outdir: floorDir,
    splitting: true,
    bundle: true,
    format: 'esm',
    platform: 'node',
    jsx: 'automatic',
    external: ['react-devtools-core'],
    // The same production build of React as dist/ (scripts/build.mjs), and the same Ink layout
    // engine read without fetch (yogaWithoutFetch) and the same string-width (ownStringWidth), so
    // the floor is fair.
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [yogaWithoutFetch, ownStringWidth],
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: 'error',
  });
  const everything = serverBin('server-everything');
  const ws = benchWorkspace(
    () =>
      `mcpServers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(everything)}, stdio]\n`,
  );
  const { repo, env } = ws;
  try {
    await ws.niffler(['mcp', 'status', '--wait']);
    const ours: number[] = [];
    const floors: number[] = [];
    const node = JSON.stringify(process.execPath);
    for (let i = 0; i < 9; i++) {
      ours.push(await timeToText(`${node} ${JSON.stringify(cli)}`, '/help', env, repo));
      floors.push(
        await timeToText(`${node} ${JSON.stringify(floor)}`, 'hello from ink', env, repo),
      );
    }
    const [a, b] = [median(ours.slice(1)), median(floors.slice(1))];
    return [
      {
        name: 'first frame, warm daemon (median ms)',
        ours: a,
        baseline: b,
        baselineName: 'bundled 1-line Ink render',
        unit: 'ms',
        ratio: a / b,
        goal: `<= floor + 50 ms (now ${a >= b ? '+' : '-'}${Math.round(Math.abs(a - b))} ms)`,
      },
    ];
  } finally {
    await ws.remove();
  }
};
export default bench;
