import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Bench, BenchResult } from './harness.ts';

// Runs every bench/*.bench.ts (or the ones named on the command line), prints one table and
// writes bench/results.json.
const dir = path.dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = (await readdir(dir))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const results: (BenchResult & { file: string })[] = [];
for (const [i, file] of files.entries()) {
  process.stderr.write(`[${i + 1}/${files.length}] ${file}\n`);
  const mod = (await import(pathToFileURL(path.join(dir, file)).href)) as { default: Bench };
  try {
    for (const result of await mod.default()) results.push({ ...result, file });
  } catch (error) {
    process.stderr.write(`  ${file} failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  }
}

const compare = (op: string, a: number, b: number): boolean =>
  op === '<=' ? a <= b : op === '<' ? a < b : op === '>=' ? a >= b : a > b;

/**
 * Whether a row meets its goal: `<= 1.2x` (the ratio), `<= raw + 150 µs` / `<= floor + 50 ms`
 * (ours over the baseline), `<= 150 MiB` / `>= 95` (our figure); blank without a goal.
 */
const met = (r: BenchResult): string => {
  if (!r.goal) return '';
  const ratio = /^(<=|>=|<|>)\s*([\d.]+)x\b/.exec(r.goal);
  if (ratio) return compare(ratio[1]!, r.ratio, Number(ratio[2])) ? 'yes' : 'NO';
  const over = /^(<=|>=|<|>)\s*\w+\s*\+\s*([\d.]+)/.exec(r.goal);
  if (over) return compare(over[1]!, r.ours - r.baseline, Number(over[2])) ? 'yes' : 'NO';
  const figure = /^(<=|>=|<|>)\s*([\d.]+)/.exec(r.goal);
  if (figure) return compare(figure[1]!, r.ours, Number(figure[2])) ? 'yes' : 'NO';
  return '?';
};

const fmt = (n: number) =>
  Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toFixed(3);
const rows = results.map((r) => [
  r.name,
  `${fmt(r.ours)} ${r.unit}`,
  `${fmt(r.baseline)} ${r.unit}`,
  r.baselineName,
  `${r.ratio.toFixed(2)}x`,
  r.goal ?? '',
  met(r),
]);
const header = ['benchmark', 'ours', 'baseline', 'baseline is', 'ratio', 'goal', 'met'];
const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
const line = (cells: string[]) => cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of rows) console.log(line(row));
const missed = results.filter((r) => met(r) === 'NO').map((r) => r.name);
if (missed.length) console.log(`\ngoals not met: ${missed.join('; ')}`);
await writeFile(
  path.join(dir, 'results.json'),
  JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      results: results.map((r) => ({ ...r, ...(r.goal ? { met: met(r) === 'yes' } : {}) })),
    },
    null,
    2,
  ) + '\n',
);
