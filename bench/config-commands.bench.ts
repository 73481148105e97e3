import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { codexConfig, codexEnv, findCodex } from './codex.ts';
import {
  benchWorkspace,
  compareCommands,
  fakeModelLines,
  serverBin,
  timeCommand,
  type Bench,
  type BenchResult,
  type BenchWorkspace,
} from './harness.ts';

// The commands that answer from the config alone (dist/config.cjs, see src/ui/config-fast.ts),
// each against `node -e 0` on the same Node, interleaved, in a workspace with a model and three
// servers configured: `mcp list` (goal ≤ 2×), `config show`, `config path`, `trust --diff`,
// `agents` and `--help`. Each command runs once before it is timed, as a user's second run
// would (its parses memo and its code cache are made by a first run of the build).
// Where a Codex binary is found (codex.ts), `niffler mcp list` and `niffler --version` are also
// set against `codex mcp list` and `codex --version` (a native binary, below any Node process's
// floor: reference rows without a goal).

const cli = path.resolve('dist/cli.cjs');

const COMMANDS: { args: string[]; goal?: string }[] = [
  { args: ['mcp', 'list'], goal: '<= 2x' },
  { args: ['config', 'show'] },
  { args: ['config', 'path'] },
  { args: ['trust', '--diff'] },
  { args: ['agents'] },
  { args: ['--help'] },
];

const bench: Bench = async () => {
  const ws = benchWorkspace((base) =>
    [
      ...fakeModelLines('http://127.0.0.1:9'),
      'mcpServers:',
      `  everything: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-everything'))}, stdio] }`,
      `  filesystem: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-filesystem'))}, ${JSON.stringify(base)}] }`,
      `  memory: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(serverBin('server-memory'))}] }`,
      '',
    ].join('\n'),
  );
  const results: BenchResult[] = [];
  try {
    results.push(...(await againstCodex(ws)));
    for (const { args, goal } of COMMANDS) {
      const { ours, baseline } = await compareCommands(
        () => timeCommand(process.execPath, [cli, ...args], { cwd: ws.repo, env: ws.env }),
        () => timeCommand(process.execPath, ['-e', '0']),
      );
      results.push({
        name: `niffler ${args.join(' ')} (config only, median ms)`,
        ours,
        baseline,
        baselineName: 'node -e 0',
        unit: 'ms',
        ratio: ours / baseline,
        ...(goal ? { goal } : {}),
      });
    }
  } finally {
    await ws.remove();
  }
  return results;
};
/** `mcp list` and `--version` against Codex's, interleaved; none when no Codex binary is found. */
const againstCodex = async (ws: BenchWorkspace): Promise<BenchResult[]> => {
  const codex = await findCodex();
  if (!('binary' in codex)) {
    process.stderr.write(`  config-commands: the Codex rows are skipped: ${codex.skipped}\n`);
    return [];
  }
  const codexHome = path.join(ws.base, 'codex-home');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    path.join(codexHome, 'config.toml'),
    codexConfig('http://127.0.0.1:9', [
      {
        name: 'everything',
        command: process.execPath,
        args: [serverBin('server-everything'), 'stdio'],
      },
      {
        name: 'filesystem',
        command: process.execPath,
        args: [serverBin('server-filesystem'), ws.base],
      },
      { name: 'memory', command: process.execPath, args: [serverBin('server-memory')] },
    ]),
  );
  const env = codexEnv(ws.env, codexHome);
  const rows: BenchResult[] = [];
  for (const args of [['mcp', 'list'], ['--version']]) {
    const { ours, baseline } = await compareCommands(
      () => timeCommand(process.execPath, [cli, ...args], { cwd: ws.repo, env: ws.env }),
      () => timeCommand(codex.binary, args, { cwd: ws.repo, env }),
    );
    rows.push({
      name: `niffler ${args.join(' ')} against Codex's (median ms)`,
      ours,
      baseline,
      baselineName: `codex ${args.join(' ')} (native)`,
      unit: 'ms',
      ratio: ours / baseline,
      notes: 'a reference: a native binary starts below any Node process',
    });
  }
  return rows;
};
export default bench;
