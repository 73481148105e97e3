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

const fmt = (n: number) =>
  Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toFixed(3);
const rows = results.map((r) => [
  r.name,
  `${fmt(r.ours)} ${r.unit}`,
  `${fmt(r.baseline)} ${r.unit}`,
  r.baselineName,
  `${r.ratio.toFixed(2)}x`,
  r.goal ?? '',
]);
const header = ['benchmark', 'ours', 'baseline', 'baseline is', 'ratio', 'goal'];
const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
const line = (cells: string[]) => cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of rows) console.log(line(row));
await writeFile(
  path.join(dir, 'results.json'),
  JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2) +
    '\n',
);
