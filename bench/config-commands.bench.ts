import path from 'node:path';
import {
  benchWorkspace,
  compareCommands,
  fakeModelLines,
  serverBin,
  timeCommand,
  type Bench,
  type BenchResult,
} from './harness.ts';

// The commands that answer from the config alone (dist/config.cjs, see src/ui/config-fast.ts),
// each against `node -e 0` on the same Node, interleaved, in a workspace with a model and three
// servers configured: `mcp list` (goal ≤ 2×), `config show`, `config path`, `trust --diff`,
// `agents` and `--help`. Each command runs once before it is timed, as a user's second run
// would (its parses memo and its code cache are made by a first run of the build).

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
export default bench;
