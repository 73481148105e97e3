import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { releaseIndex, searchSessions } from '../src/main/engine/search-index.ts';
import { writeTranscripts } from '../test/fixtures/transcripts.ts';
import { median, type Bench, type BenchResult } from './harness.ts';

// `niffler sessions search` over 10,000 transcripts of a workspace (3 turns each: prompts, a
// tool call with a file's text, answers) as the daemon runs it, against `grep -rl` over the same
// files in the same run: cold (a daemon's first search: the index file is read) and warm (the
// index the daemon holds between searches). Rounds alternate so machine noise hits all alike.
const SESSIONS = 10_000;
const ROUNDS = 15;
const WORD = 'xylophonic';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

const bench: Bench = async () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-bench-search-')));
  const dir = path.join(base, 'sessions');
  try {
    const ids = writeTranscripts(dir, SESSIONS, { 7777: `It was the ${WORD} cache.` });
    const start = process.hrtime.bigint();
    const first = await searchSessions(dir, WORD);
    const build = ms(start);
    if (first.hits.length !== 1 || first.hits[0]!.id !== ids[7777])
      throw new Error(`expected session ${ids[7777]}, found ${JSON.stringify(first.hits)}`);
    const search = async (cold: boolean) => {
      if (cold) releaseIndex(dir);
      const begin = process.hrtime.bigint();
      const { hits } = await searchSessions(dir, WORD);
      if (hits.length !== 1) throw new Error(`search found ${hits.length} sessions, not 1`);
      return ms(begin);
    };
    const grep = async () => {
      const begin = process.hrtime.bigint();
      const found = await execa('grep', ['-rl', '--include=*.jsonl', WORD, dir], { reject: false });
      if (found.stdout.trim().split('\n').length !== 1) throw new Error('grep found not 1 file');
      return ms(begin);
    };
    const times = { cold: [] as number[], warm: [] as number[], grep: [] as number[] };
    for (let round = -2; round < ROUNDS; round++) {
      const cold = await search(true);
      const warm = await search(false);
      const g = await grep();
      if (round < 0) continue;
      times.cold.push(cold);
      times.warm.push(warm);
      times.grep.push(g);
    }
    const baseline = median(times.grep);
    const row = (name: string, values: number[], notes: string): BenchResult => ({
      name,
      ours: median(values),
      baseline,
      baselineName: 'grep -rl over the same transcripts (*.jsonl)',
      unit: 'ms',
      ratio: median(values) / baseline,
      goal: '< 1x',
      notes,
    });
    return [
      row(
        `session search, ${SESSIONS.toLocaleString('en')} transcripts, cold (median)`,
        times.cold,
        `a daemon's first search reads the index file; built from the transcripts in ${build.toFixed(0)} ms on the very first`,
      ),
      row(
        `session search, ${SESSIONS.toLocaleString('en')} transcripts, warm (median)`,
        times.warm,
        'the index the daemon holds between searches (appended records read on)',
      ),
    ];
  } finally {
    releaseIndex(dir);
    rmSync(base, { recursive: true, force: true });
  }
};

export default bench;
