import path from 'node:path';
import { compareCommands, timeCommand, type Bench } from './harness.ts';

const cli = path.resolve('dist/cli.cjs');

/** `niffler --version` against `node -e 0`: what start-up costs beyond Node's own (goal ≤ 1.2×). */
const bench: Bench = async () => {
  const { ours, baseline } = await compareCommands(
    () => timeCommand(process.execPath, [cli, '--version']),
    () => timeCommand(process.execPath, ['-e', '0']),
  );
  return [
    {
      name: 'niffler --version (median ms)',
      ours,
      baseline,
      baselineName: 'node -e 0',
      unit: 'ms',
      ratio: ours / baseline,
      goal: '<= 1.2x',
    },
  ];
};
export default bench;
