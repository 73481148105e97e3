import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { makeSearchTree } from '../test/fixtures/search-tree.ts';
import { benchWorkspace, median, timeCommand, type Bench, type BenchResult } from './harness.ts';

// grep and glob over a generated tree of babel's shape — 30,000 tracked files, ~40 MB searched,
// its real kinds of ignore rules (test/fixtures/search-tree.ts) — through the real daemon path: an
// SDK client → `niffler mcp serve` → the daemon → its tools pool. In the same run, interleaved,
// ripgrep (and git grep / git ls-files where they are) on the same tree, started as processes.
// Also: that the file sets are ripgrep's, the first match of a common word against `rg | head`,
// and the daemon's peak RSS during full searches against its resting size.
const RUNS = 5;
const SCALE = 1.6;

const hasCommand = (name: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

const status = (pid: number, field: 'VmHWM' | 'VmRSS'): number =>
  Number(
    new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1],
  ) / 1024;

type Ms = () => Promise<number>;

/** Medians of `ours` and each baseline, interleaved `RUNS` times after a warm-up of each. */
const interleaved = async (sides: Ms[]): Promise<number[]> => {
  for (const side of sides) await side();
  const times = sides.map(() => [] as number[]);
  for (let run = 0; run < RUNS; run++)
    for (const [i, side] of sides.entries()) times[i]!.push(await side());
  return times.map(median);
};

const bench: Bench = async () => {
  if (!hasCommand('rg'))
    throw new Error('ripgrep (rg) is needed for this bench: apt install ripgrep');
  const ws = benchWorkspace(() => 'tools:\n  output:\n    maxChars: 2000000\n');
  const client = new Client({ name: 'bench', version: '0' });
  try {
    rmSync(path.join(ws.repo, '.git'), { recursive: true, force: true });
    const tree = makeSearchTree(ws.base, { scale: SCALE });
    // The daemon's HOME is the workspace's base: the same git config (core.excludesFile) as rg's.
    copyFileSync(path.join(tree.home, '.gitconfig'), path.join(ws.base, '.gitconfig'));
    const env = { ...tree.env, HOME: ws.base };
    const run = (file: string, args: string[]) => timeCommand(file, args, { env, cwd: ws.repo });
    const rgOut = (args: string[]) =>
      execFileSync('rg', args, {
        cwd: ws.repo,
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        maxBuffer: 1 << 28,
      })
        .split('\n')
        .filter(Boolean)
        .sort();
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [path.resolve('dist/cli.cjs'), 'mcp', 'serve', '-C', ws.repo],
        env: ws.env,
        stderr: 'inherit',
      }),
    );
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(JSON.stringify(result.content));
      const text = (result.content as { type: string; text: string }[])[0]?.text ?? '';
      return { text, structured: result.structuredContent as { complete: boolean } };
    };
    const timed =
      (name: string, args: Record<string, unknown>): Ms =>
      async () => {
        const start = performance.now();
        const { structured } = await call(name, args);
        if (!structured.complete) throw new Error(`${name} came back incomplete`);
        return performance.now() - start;
      };
    const entries = (text: string) =>
      text.split('\n').filter((line) => line && !/^[[(]/.test(line));

    // The daemon's size before any search: one call on one file started its pool.
    await call('grep', { pattern: tree.common, path: 'README.md' });
    const { stdout } = (await ws.niffler(['daemon', 'status', '--json'])) as { stdout: string };
    const pid = (JSON.parse(stdout) as { pid: number }).pid;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const before = status(pid, 'VmRSS');

    // The file sets first: glob **/* against rg --files, grep -l against rg -l.
    const files = rgOut(['--files']);
    const globbed = entries((await call('glob', { pattern: '**/*' })).text).sort();
    const grepped = entries(
      (await call('grep', { pattern: tree.rare, output_mode: 'files_with_matches' })).text,
    ).sort();
    const rgFound = rgOut(['-l', tree.rare]);
    const differing = (a: string[], b: string[]) => {
      const sa = new Set(a);
      const sb = new Set(b);
      return a.filter((x) => !sb.has(x)).length + b.filter((x) => !sa.has(x)).length;
    };
    const mismatches = differing(globbed, files) + differing(grepped, rgFound);

    const literal = await interleaved([
      timed('grep', { pattern: tree.rare }),
      () => run('rg', [tree.rare]),
      ...(hasCommand('git') ? [() => run('git', ['grep', '-n', tree.rare])] : []),
    ]);
    const regex = await interleaved([
      timed('grep', { pattern: tree.regex, output_mode: 'files_with_matches' }),
      () => run('rg', ['-l', tree.regex]),
      ...(hasCommand('git') ? [() => run('git', ['grep', '-l', '-E', tree.regex])] : []),
    ]);
    const glob = await interleaved([
      timed('glob', { pattern: '**/*.ts' }),
      () => run('rg', ['--files', '-g', '*.ts']),
      ...(hasCommand('git') ? [() => run('git', ['ls-files', '--', '*.ts'])] : []),
    ]);
    const first = await interleaved([
      timed('grep', { pattern: tree.common, head_limit: 1 }),
      () => run('sh', ['-c', `rg ${tree.common} | head -1`]),
      // The floor of any call on this path (client → mcp serve → daemon → pool thread and
      // back): the same grep on one file, against rg on that file.
      timed('grep', { pattern: tree.common, path: 'README.md', head_limit: 1 }),
      () => run('rg', ['-m', '1', tree.common, 'README.md']),
    ]);

    // The daemon's RSS: resting (after the searches above, idle: its pool threads still up),
    // and its peak (VmHWM, reset first through /proc/PID/clear_refs) during each full search,
    // the largest kept. (Its size before any search is `before`, for scale.)
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const resting = status(pid, 'VmRSS');
    const peaks: number[] = [];
    for (const [name, args] of [
      ['grep', { pattern: tree.common, output_mode: 'count' }],
      ['grep', { pattern: tree.rare }],
      ['glob', { pattern: '**/*' }],
    ] as const) {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      await call(name, args);
      peaks.push(status(pid, 'VmHWM'));
    }
    const peak = Math.max(...peaks);

    const row = (
      name: string,
      times: number[],
      baselineName: string,
      goal?: string,
    ): BenchResult => ({
      name,
      ours: times[0]!,
      baseline: times[1]!,
      baselineName,
      unit: 'ms',
      ratio: times[0]! / times[1]!,
      ...(goal ? { goal } : {}),
      notes: `median of ${RUNS}, interleaved; ${tree.written} files written, ${(tree.bytes / 1048576).toFixed(0)} MB`,
    });
    const gitRow = (name: string, times: number[], what: string): BenchResult[] =>
      times[2] === undefined
        ? []
        : [{ ...row(name, [times[0]!, times[2]], what), notes: 'for scale' }];
    return [
      row(
        `grep a literal in ${rgFound.length} files, whole tree (daemon via mcp serve)`,
        literal,
        'rg',
        '<= 2x',
      ),
      ...gitRow('grep a literal, whole tree, against git grep', literal, 'git grep -n'),
      row('grep -l a regex, whole tree', regex, 'rg -l', '<= 2x'),
      ...gitRow('grep -l a regex, against git grep', regex, 'git grep -l -E'),
      row('glob **/*.ts, whole tree', glob, 'rg --files -g', '<= 2x'),
      ...gitRow('glob **/*.ts, against git ls-files', glob, 'git ls-files'),
      row(
        `first match of a common word ("${tree.common}", head_limit 1)`,
        first,
        'rg | head -1',
        '<= 2x',
      ),
      {
        ...row(
          'the floor of a call: the same grep on one file',
          [first[2]!, first[3]!],
          'rg -m 1 FILE',
        ),
        notes: 'client → mcp serve → daemon → pool thread and back; for scale',
      },
      {
        name: 'files differing from ripgrep (glob **/*, grep -l)',
        ours: mismatches,
        baseline: files.length,
        baselineName: 'files rg lists',
        unit: 'files',
        ratio: mismatches / files.length,
        goal: '<= 0',
      },
      {
        name: 'daemon peak RSS during a full search',
        ours: peak,
        baseline: resting,
        baselineName: 'the daemon resting',
        unit: 'MiB',
        ratio: peak / resting,
        goal: '<= resting + 20',
        notes: `peaks: grep -c common ${peaks[0]!.toFixed(0)}, grep literal ${peaks[1]!.toFixed(0)}, glob **/* ${peaks[2]!.toFixed(0)} MiB; resting after the searches above`,
      },
      {
        name: 'daemon peak RSS during a full search, over its size before any search',
        ours: peak,
        baseline: before,
        baselineName: 'the daemon before searching',
        unit: 'MiB',
        ratio: peak / before,
        notes:
          'for scale: the pool threads a full search starts (V8 isolates) stay up a minute idle',
      },
    ];
  } finally {
    await client.close().catch(() => {});
    await ws.remove();
  }
};
export default bench;
