import path from 'node:path';
import { build } from 'esbuild';
import { fastBuildOptions } from '../scripts/build-options.mjs';
import { nifflerPaths } from '../src/main/paths.ts';
import { VERSION } from '../src/main/version.ts';
import {
  benchCacheDir,
  benchWorkspace,
  compareCommands,
  timeCommand,
  type Bench,
  serverBin,
} from './harness.ts';

const cli = path.resolve('dist/cli.cjs');

/**
 * Warm `niffler mcp status` with 3 live servers (everything, filesystem, memory), against
 * `node -e 0` and against a raw-SDK script that connects to the same 3 servers and lists tools.
 */
const bench: Bench = async () => {
  const servers = (base: string) => [
    {
      name: 'everything',
      command: process.execPath,
      args: [serverBin('server-everything'), 'stdio'],
      env: {},
    },
    {
      name: 'filesystem',
      command: process.execPath,
      args: [serverBin('server-filesystem'), base],
      env: {},
    },
    {
      name: 'memory',
      command: process.execPath,
      args: [serverBin('server-memory')],
      env: { MEMORY_FILE_PATH: path.join(base, 'memory.jsonl') },
    },
  ];
  const ws = benchWorkspace(
    (base) =>
      `mcpServers:\n${servers(base)
        .map(
          (s) =>
            `  ${s.name}:\n    command: ${JSON.stringify(s.command)}\n    args: ${JSON.stringify(s.args)}\n    env: ${JSON.stringify(s.env)}\n`,
        )
        .join('')}`,
  );
  const { repo, env } = ws;
  try {
    await ws.niffler(['mcp', 'status', '--wait']);
    const warm = () =>
      timeCommand(process.execPath, [cli, 'mcp', 'status', '--json'], { cwd: repo, env });
    const vsNode = await compareCommands(
      warm,
      () => timeCommand(process.execPath, ['-e', '0']),
      20,
    );
    // The same two questions from a bare socket client, bundled alike (see the fixture).
    const floorDir = benchCacheDir;
    await build({
      ...fastBuildOptions(floorDir),
      entryPoints: { 'socket-status': path.resolve('bench/fixtures/socket-status.ts') },
      sourcemap: false,
    });
    const socket = nifflerPaths(repo, env).socket;
    const vsFloor = await compareCommands(
      warm,
      () =>
        timeCommand(process.execPath, [path.join(floorDir, 'socket-status.cjs'), VERSION, socket], {
          env: { ...env, NODE_COMPILE_CACHE: path.join(floorDir, 'compile-cache') },
        }),
      20,
    );
    const raw = () =>
      timeCommand(
        process.execPath,
        [path.resolve('bench/fixtures/raw-sdk-list.mjs'), JSON.stringify(servers(ws.base))],
        { cwd: repo, env },
      );
    // Interleaved with ours after a warm-up each, so both medians come from the same stretch.
    const vsRaw = await compareCommands(warm, raw, 5);
    return [
      {
        name: 'warm mcp status, 3 servers (median ms)',
        ours: vsNode.ours,
        baseline: vsNode.baseline,
        baselineName: 'node -e 0',
        unit: 'ms',
        ratio: vsNode.ours / vsNode.baseline,
        goal: '<= 1.5x',
      },
      {
        name: 'warm mcp status vs a bare socket client (ms)',
        ours: vsFloor.ours,
        baseline: vsFloor.baseline,
        baselineName: 'bare socket floor',
        unit: 'ms',
        ratio: vsFloor.ours / vsFloor.baseline,
        notes: `the floor itself is ${(vsFloor.baseline / vsNode.baseline).toFixed(2)}x node -e 0`,
      },
      {
        name: 'warm mcp status vs raw SDK connect+list (ms)',
        ours: vsRaw.ours,
        baseline: vsRaw.baseline,
        baselineName: 'raw SDK, 3 servers',
        unit: 'ms',
        ratio: vsRaw.ours / vsRaw.baseline,
        goal: '< 1x',
      },
    ];
  } finally {
    await ws.remove();
  }
};
export default bench;
