import { setTimeout as delay } from 'node:timers/promises';
import { reply } from '../test/fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../test/fixtures/fake-llm/server.ts';
import {
  benchWorkspace,
  median,
  promptToModel,
  serverBin,
  type Bench,
  fakeModelLines,
} from './harness.ts';

// A warm daemon's first turn against its later turns: the time from starting `niffler -p` to the
// model's receiving the request. The daemon is started and its servers connected before the
// first; what a first turn used to build (the API worker and its client library, the tools pool)
// it now builds while idle. Goal: first ≤ 1.2× later.

const ROUNDS = 5;
const LATER = 3;

const bench: Bench = async () => {
  const llm = await startFakeLlm({ fallback: reply().text('ok') });
  const ws = benchWorkspace(() =>
    [
      ...fakeModelLines(llm.url, 'contextWindow: 32000'),
      'mcpServers:',
      '  everything:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]`,
      '',
    ].join('\n'),
  );
  /** ms from starting `niffler -p` to the request reaching the model. */
  const toModel = async (): Promise<number> => (await promptToModel(ws, llm)).ms;
  const first: number[] = [];
  const later: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await ws.niffler(['daemon', 'stop']);
      await ws.niffler(['mcp', 'status', '--wait']);
      // The daemon warms itself once its servers are up; give it the moment a user would.
      await delay(1500);
      first.push(await toModel());
      for (let i = 0; i < LATER; i++) later.push(await toModel());
    }
  } finally {
    await ws.remove();
    await llm.close();
  }
  return [
    {
      name: 'warm daemon, first turn: start of -p to the model request',
      ours: median(first),
      baseline: median(later),
      baselineName: 'a later turn',
      unit: 'ms',
      ratio: median(first) / median(later),
      goal: '<= 1.2x',
    },
  ];
};
export default bench;
