import path from 'node:path';
import { benchWorkspace, compareCommands, timeCommand, type Bench } from './harness.ts';

// Whether Node's compile cache (now in $NIFFLER_HOME/cache/compile, never the shared temp
// directory) still pays: a command of the main bundle (`niffler config path`, no daemon) with the
// cache warm, against the same command with it switched off (NODE_DISABLE_COMPILE_CACHE=1).
const cli = path.resolve('dist/cli.cjs');

const bench: Bench = async () => {
  const ws = benchWorkspace(() => 'logLevel: info\n');
  try {
    const run = (env: Record<string, string>) => () =>
      timeCommand(process.execPath, [cli, 'config', 'path'], { env, cwd: ws.repo });
    const { ours, baseline } = await compareCommands(
      run(ws.env),
      run({ ...ws.env, NODE_DISABLE_COMPILE_CACHE: '1' }),
      25,
    );
    return [
      {
        name: 'niffler config path with the compile cache (median ms)',
        ours,
        baseline,
        baselineName: 'the same, NODE_DISABLE_COMPILE_CACHE=1',
        unit: 'ms',
        ratio: ours / baseline,
        goal: '< 1x (keep the cache only while it pays)',
      },
    ];
  } finally {
    await ws.remove();
  }
};
export default bench;
