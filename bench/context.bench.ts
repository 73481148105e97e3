import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { execa } from 'execa';
import { tokensOf } from '../src/main/engine/context/compaction.ts';
import { ContextKeeper } from '../src/main/engine/context/keeper.ts';
import { buildSystemPrompt } from '../src/main/engine/context/prompt.ts';
import {
  planTools,
  searchTools,
  type SearchableTool,
} from '../src/main/engine/context/tool-search.ts';
import type { SummaryModel } from '../src/main/engine/context/summary.ts';
import { Calibration } from '../src/main/engine/context/tokens.ts';
import { SnapshotStore } from '../src/main/engine/snapshots.ts';
import { builtinTools } from '../src/workers/protocol/tools.ts';
import type { ChatMessage } from '../src/workers/protocol/api.ts';
import { median, serverBin, type Bench, type BenchResult } from './harness.ts';

// Long sessions and many tools, each against a baseline in the same run:
// - request size: the first request's tools and system prompt with 50, 300 and 1,000 MCP tools,
//   tools.search auto against never (the tools are the real definitions the catalog fixtures and
//   the three published servers list over MCP; 1,000 repeats them under other server names);
//   the 300-tool row also gives how often the right tool is among the first search's results over
//   the 100 queries of test/fixtures/mcp/catalog/queries.json (goal ≥ 95);
// - compaction: clearing and summarizing a 200k-token history, the model's own time left out (its
//   summary comes back at once), against serializing that history once, as a request does;
// - compaction's own cost per turn at 16k and 200k windows: a session of the issue's turns (a
//   ~1.5k-token question, a ~1.5k-token read, a ~400-word answer) fitted at every step, against
//   serializing each request once (goal ≤ 3 ms a turn: under 0.1 % of a model's turn);
// - undo snapshot of a 10k-file workspace against `git add -A && git write-tree` in a scratch index.

const fixtures = path.resolve('test/fixtures/mcp');
const tsx = import.meta.resolve('tsx');
const WINDOW = 128_000;

interface Listed {
  server: string;
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

const listTools = async (server: string, command: string, args: string[]): Promise<Listed[]> => {
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
  try {
    const { tools } = await client.listTools();
    return tools.map((t) => ({
      server,
      name: t.name,
      description: t.description ?? '',
      inputSchema: t.inputSchema,
    }));
  } finally {
    await client.close();
  }
};

/** Every tool of the 14 catalog fixtures and the three published servers, as they list them. */
const realTools = async (): Promise<Listed[]> => {
  const catalog = JSON.parse(
    readFileSync(path.join(fixtures, 'catalog', 'tools.json'), 'utf8'),
  ) as { server: string }[];
  const names = [...new Set(catalog.map((t) => t.server))];
  const lists = await Promise.all([
    ...names.map((name) =>
      listTools(name, process.execPath, ['--import', tsx, path.join(fixtures, 'catalog.ts'), name]),
    ),
    listTools('everything', process.execPath, [serverBin('server-everything'), 'stdio']),
    listTools('filesystem', process.execPath, [serverBin('server-filesystem'), os.tmpdir()]),
    listTools('memory', process.execPath, [serverBin('server-memory')]),
  ]);
  return lists.flat();
};

const searchable = (tools: Listed[], count: number): SearchableTool[] =>
  Array.from({ length: count }, (_, i) => {
    const t = tools[i % tools.length]!;
    const server = i < tools.length ? t.server : `${t.server}${Math.floor(i / tools.length) + 1}`;
    return {
      kind: 'mcp',
      server,
      spec: {
        name: `${server}__${t.name}`,
        description: t.description ?? '',
        inputSchema: t.inputSchema,
      },
    };
  });

/** The bytes of a first request's system prompt and tools (OpenAI's wire shape of the tools). */
const requestBytes = (
  system: string,
  tools: { name: string; description: string; inputSchema: unknown }[],
): number =>
  JSON.stringify({
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: 'hi' },
    ],
    tools: tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    })),
  }).length;

const sizeRows = async (tools: Listed[]): Promise<BenchResult[]> => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-bench-ctx-')));
  const system = (
    await buildSystemPrompt({ root: base, home: base, hasTools: true, trusted: true, git: false })
  ).text;
  rmSync(base, { recursive: true, force: true });
  const builtins: SearchableTool[] = builtinTools().map((d) => ({
    kind: 'builtin',
    spec: { name: d.name, description: d.description, inputSchema: d.parameters },
  }));
  const rows: BenchResult[] = [];
  for (const count of [50, 300, 1000]) {
    const all = [...builtins, ...searchable(tools, count)];
    const plan = (mode: 'auto' | 'never') =>
      planTools(all, { mode, window: WINDOW, alwaysLoad: new Set(), loaded: new Set() });
    const ours = requestBytes(system, plan('auto').offered);
    const baseline = requestBytes(system, plan('never').offered);
    rows.push({
      name: `first request with ${count} MCP tools, tools.search auto (KB; ~${Math.round(ours / 4000)}k tokens)`,
      ours: ours / 1024,
      baseline: baseline / 1024,
      baselineName: `never (~${Math.round(baseline / 4000)}k tokens)`,
      unit: 'KB',
      ratio: ours / baseline,
      ...(count === 300 ? { goal: '<= 10 KB' } : {}),
    });
  }
  return rows;
};

const searchRow = (tools: Listed[]): BenchResult => {
  const queries = JSON.parse(
    readFileSync(path.join(fixtures, 'catalog', 'queries.json'), 'utf8'),
  ) as { query: string; expected: string }[];
  const deferred = searchable(tools, tools.length);
  const found = queries.filter((q) =>
    searchTools(deferred, q.query).some((t) => t.spec.name === q.expected),
  ).length;
  const first = queries.filter(
    (q) => searchTools(deferred, q.query)[0]?.spec.name === q.expected,
  ).length;
  return {
    name: `right tool among the first search's results (${queries.length} queries, ${tools.length} tools)`,
    ours: found,
    baseline: first,
    baselineName: 'ranked first',
    unit: 'queries',
    ratio: found / queries.length,
    higherIsBetter: true,
    goal: '>= 95',
  };
};

/** A session of about `tokens` tokens: turns of a question, a tool call, a large output and an answer. */
const history = (tokens: number): ChatMessage[] => {
  const out: ChatMessage[] = [];
  for (let t = 0; tokensOf(out) < tokens; t++)
    out.push(
      { role: 'user', content: `question ${t}: what does module ${t} do?` },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: `c${t}`, name: 'read_file', args: { path: `src/m${t}.ts` } }],
      },
      {
        role: 'tool',
        toolCallId: `c${t}`,
        name: 'read_file',
        result: { ok: true, output: `export const m${t} = 1;\n`.repeat(70) },
      },
      { role: 'assistant', content: `Module ${t} exports one constant. `.repeat(6) },
    );
  return out;
};

/** A summary model that answers at once: the model's own time is left out of what is measured. */
const instantSummary = (window: number): SummaryModel => ({
  window,
  scale: 1,
  ask: async () =>
    'Goals: understand the modules. Decisions: none. Files touched: src/m*.ts. Open tasks: none.',
});

const compactionRow = async (): Promise<BenchResult> => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-bench-compact-'));
  const messages = history(200_000);
  const times: number[] = [];
  const floors: number[] = [];
  for (let round = 0; round < 5; round++) {
    const keeper = new ContextKeeper({
      saveOutput: (id, text) => {
        const file = path.join(dir, `${round}-${id}.txt`);
        writeFileSync(file, text);
        return file;
      },
    });
    const start = performance.now();
    const fitted = await keeper.fit(
      { history: messages, system: 'system', instructionChars: 0, tools: [] },
      {
        window: 100_000,
        reserve: 8_000,
        threshold: 0.8,
        calibration: new Calibration(),
        summarizer: instantSummary(100_000),
        signal: new AbortController().signal,
      },
    );
    times.push(performance.now() - start);
    if (fitted.compactions.length === 0) throw new Error('the history was not compacted');
    const t0 = performance.now();
    JSON.stringify(messages);
    floors.push(performance.now() - t0);
  }
  rmSync(dir, { recursive: true, force: true });
  const ours = median(times);
  const baseline = median(floors);
  return {
    name: 'compact a 200k-token history (model time excluded)',
    ours,
    baseline,
    baselineName: 'serialize it once',
    unit: 'ms',
    ratio: ours / baseline,
  };
};

/** One turn of the issue's shape: a ~1.5k-token question, a ~1.5k-token read, a ~400-word answer. */
const issueTurn = (t: number): ChatMessage[][] => [
  [
    {
      role: 'user',
      content: `question ${t}: ${'why does the parser fail on this input? '.repeat(150)}`,
    },
  ],
  [
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: `c${t}`, name: 'read_file', args: { path: `src/m${t}.ts` } }],
    },
    {
      role: 'tool',
      toolCallId: `c${t}`,
      name: 'read_file',
      result: {
        ok: true,
        output: `export const m${t} = parse(input, { strict: true });\n`.repeat(110),
      },
    },
  ],
  [{ role: 'assistant', content: `Module ${t} parses strictly, so the test fails. `.repeat(52) }],
];

/**
 * Compaction's own cost per turn: a session of `turns` turns of the issue's shape, each request
 * fitted as a turn does (once after the question, once after the read), the summary model
 * answering at once so its time is left out; against serializing each request once, as sending
 * it does. Outputs cleared are written to files, as they are in a session.
 */
const perTurnRow = async (window: number, turns: number): Promise<BenchResult> => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-bench-turn-'));
  const tools = builtinTools().map((d) => ({
    name: d.name,
    description: d.description,
    inputSchema: d.parameters,
  }));
  const calibration = new Calibration();
  calibration.learnCount(1000, 1250);
  const keeper = new ContextKeeper({
    saveOutput: (id, text) => {
      const file = path.join(dir, `${id}.txt`);
      writeFileSync(file, text);
      return file;
    },
  });
  const history: ChatMessage[] = [];
  let fitting = 0;
  let serializing = 0;
  for (let t = 0; t < turns; t++)
    for (const step of issueTurn(t)) {
      history.push(...step);
      if (step[0]!.role === 'assistant' && !step[0]!.toolCalls) continue;
      const start = performance.now();
      const fitted = await keeper.fit(
        { history, system: 'You are niffler.', instructionChars: 0, tools },
        {
          window,
          reserve: Math.min(8192, Math.floor(window / 4)),
          threshold: 0.8,
          calibration,
          summarizer: instantSummary(window),
          signal: new AbortController().signal,
        },
      );
      const fittedAt = performance.now();
      JSON.stringify({
        messages: [{ role: 'system', content: fitted.system }, ...fitted.messages],
        tools,
      });
      serializing += performance.now() - fittedAt;
      fitting += fittedAt - start;
    }
  const compactions = keeper.markers.length;
  rmSync(dir, { recursive: true, force: true });
  return {
    name: `compaction's own cost per turn, ${window / 1000}k window (${turns} turns of ~3.6k tokens, ${compactions} compactions; model time excluded)`,
    ours: fitting / turns,
    baseline: serializing / turns,
    baselineName: 'serializing its requests once',
    unit: 'ms',
    ratio: fitting / serializing,
    goal: '<= 3 ms',
  };
};

/** Runs `git add -A && git write-tree` into a scratch index of `gitDir` for the work tree `root`. */
const gitSnapshot = async (root: string, gitDir: string, index: string): Promise<number> => {
  const start = performance.now();
  await execa('sh', ['-c', 'git add -A && git write-tree'], {
    cwd: root,
    env: { ...process.env, GIT_DIR: gitDir, GIT_WORK_TREE: root, GIT_INDEX_FILE: index },
  });
  return performance.now() - start;
};

const timeTake = async (store: SnapshotStore): Promise<number> => {
  const start = performance.now();
  const taken = await store.take('bench');
  if (!taken.ok) throw new Error(taken.reason);
  return performance.now() - start;
};

/**
 * Undo snapshots of a 10k-file workspace. Cold: the first snapshot into a new store, against git
 * hashing the same files into a new repository. Warm (every later turn): after 10 files changed,
 * against `git add -A && git write-tree` in a scratch index of a repository that has the objects.
 */
const snapshotRows = async (): Promise<BenchResult[]> => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-bench-snap-')));
  const root = path.join(base, 'repo');
  for (let d = 0; d < 100; d++) {
    mkdirSync(path.join(root, `dir${d}`), { recursive: true });
    for (let f = 0; f < 100; f++)
      writeFileSync(path.join(root, `dir${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
  }
  await execa('git', ['init', '-q'], { cwd: root });
  const cold = { ours: [] as number[], baseline: [] as number[] };
  const warm = { ours: [] as number[], baseline: [] as number[] };
  for (let round = 0; round < 3; round++) {
    const store = new SnapshotStore(path.join(base, `store${round}`), root);
    const scratch = path.join(base, `git${round}`);
    await execa('git', ['init', '--bare', '-q', scratch]);
    cold.ours.push(await timeTake(store));
    cold.baseline.push(await gitSnapshot(root, scratch, path.join(base, `cold-index${round}`)));
    for (let f = 0; f < 10; f++)
      writeFileSync(path.join(root, `dir${f}`, `f${round}.txt`), `changed in round ${round}\n`);
    warm.ours.push(await timeTake(store));
    warm.baseline.push(await gitSnapshot(root, scratch, path.join(base, `warm-index${round}`)));
  }
  rmSync(base, { recursive: true, force: true });
  const row = (name: string, t: typeof cold, baselineName: string): BenchResult => ({
    name,
    ours: median(t.ours),
    baseline: median(t.baseline),
    baselineName,
    unit: 'ms',
    ratio: median(t.ours) / median(t.baseline),
  });
  return [
    row(
      'undo snapshot, 10k-file workspace, a later turn',
      warm,
      'git add -A && git write-tree, scratch index',
    ),
    row('undo snapshot, 10k-file workspace, the first', cold, 'the same into a new repository'),
  ];
};

const bench: Bench = async () => {
  const tools = await realTools();
  return [
    ...(await sizeRows(tools)),
    searchRow(tools),
    await compactionRow(),
    await perTurnRow(16_000, 40),
    await perTurnRow(200_000, 300),
    ...(await snapshotRows()),
  ];
};

export default bench;
