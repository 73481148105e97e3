import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { reply } from '../test/fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../test/fixtures/fake-llm/server.ts';
import { readSkills } from '../src/main/extensions/skills.ts';
import { catalogBudget, skillCatalog } from '../src/main/extensions/skill-catalog.ts';
import {
  benchWorkspace,
  fakeModelLines,
  median,
  type Bench,
  type BenchWorkspace,
  promptToModel,
} from './harness.ts';

// Session start with 200 skills installed against none: the time from starting `niffler -p` to
// the model's receiving the request on a warm daemon, the bytes the skills add to that first
// request, and reading the 200 skills (what a daemon start or a config reload does once).
// Goals (issue 33): ≤ 20 ms and ≤ 6 KB more.

const SKILLS = 200;
const ROUNDS = 9;

const install = (dir: string) => {
  for (let i = 0; i < SKILLS; i++) {
    const name = `skill-${String(i).padStart(3, '0')}`;
    mkdirSync(path.join(dir, name, 'references'), { recursive: true });
    writeFileSync(
      path.join(dir, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Handles task family ${i} — formats, checks and fixes its files. Use when the user mentions family ${i} or its file types.\nlicense: Apache-2.0\n---\n# Skill ${i}\n\n${'Step by step instructions for the task. '.repeat(60)}\n`,
    );
    writeFileSync(path.join(dir, name, 'references', 'guide.md'), 'Details.\n'.repeat(200));
  }
};

/** ms from starting `niffler -p` to the request reaching the model, and the request's size. */
const toModel = async (
  ws: BenchWorkspace,
  llm: FakeLlm,
): Promise<{ ms: number; bytes: number }> => {
  const { ms, request } = await promptToModel(ws, llm);
  return { ms, bytes: Buffer.byteLength(JSON.stringify(request.body)) };
};

/** ms to read the skills of `ws` and build the catalog, in this process. */
const readTime = (ws: BenchWorkspace): number => {
  const start = performance.now();
  const { skills } = readSkills(ws.repo, ws.env);
  skillCatalog(skills, catalogBudget(128_000));
  return performance.now() - start;
};

const bench: Bench = async () => {
  const llm = await startFakeLlm({ fallback: reply().text('ok') });
  const config = () => `${fakeModelLines(llm.url, 'contextWindow: 128000').join('\n')}\n`;
  const none = benchWorkspace(config);
  const many = benchWorkspace(config);
  install(path.join(many.base, '.agents', 'skills'));
  const times = { none: [] as number[], many: [] as number[] };
  const bytes = { none: 0, many: 0 };
  const reads = { none: [] as number[], many: [] as number[] };
  try {
    for (const ws of [none, many]) await toModel(ws, llm); // daemons up and warm
    for (let round = 0; round < ROUNDS; round++) {
      for (const [key, ws] of [
        ['none', none],
        ['many', many],
      ] as const) {
        const r = await toModel(ws, llm);
        times[key].push(r.ms);
        bytes[key] = r.bytes;
        reads[key].push(readTime(ws));
      }
    }
  } finally {
    await none.remove();
    await many.remove();
    await llm.close();
  }
  return [
    {
      name: `session start with ${SKILLS} skills: start of -p to the model request (warm daemon)`,
      ours: median(times.many),
      baseline: median(times.none),
      baselineName: 'no skills',
      unit: 'ms',
      ratio: median(times.many) / median(times.none),
      goal: '<= baseline + 20 ms',
    },
    {
      name: `${SKILLS} skills: size of the first request`,
      ours: bytes.many - bytes.none,
      baseline: bytes.none,
      baselineName: 'the request without skills',
      unit: 'B added',
      ratio: bytes.many / bytes.none,
      goal: '<= 6144',
    },
    {
      name: `reading ${SKILLS} skills again and building the catalog (a config reload)`,
      ours: median(reads.many),
      baseline: median(reads.none),
      baselineName: 'no skills',
      unit: 'ms',
      ratio: median(reads.many) / Math.max(median(reads.none), 0.001),
      goal: '<= baseline + 20 ms',
    },
  ];
};
export default bench;
