import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { collectWhenQuiet, type Collectable } from '../../../src/main/daemon/quiet-gc.ts';
import { collectGarbage } from '../../../src/workers/shared/gc.ts';

// A daemon's threads collect the garbage of the turns it ran when it goes quiet, or every few
// turns of a busy stretch (src/main/daemon/quiet-gc.ts); never while a turn runs.

/** An engine as the scheduler sees it, counting the collections each of its threads was asked for. */
const fakeEngine = () => {
  const asked: string[] = [];
  const engine: Collectable & { runningTurns: number } = {
    runningTurns: 0,
    mcp: { collectGarbage: () => asked.push('mcp') },
    api: { collectGarbage: () => asked.push('api') },
  };
  return { engine, asked };
};

describe('collectGarbage', () => {
  it('collects what nothing holds any more', async () => {
    const ref = new WeakRef(Array.from({ length: 100_000 }, (_, i) => i));
    // A WeakRef's target lives to the end of the job that made or read it.
    await tick();
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
  });
});

describe('collectWhenQuiet', () => {
  it('collects in every thread once the daemon has been quiet for a moment', async () => {
    const { engine, asked } = fakeEngine();
    let collected!: () => void;
    const done = new Promise<void>((resolve) => (collected = resolve));
    const here: number[] = [];
    const gc = collectWhenQuiet({
      quietMs: 1,
      collectHere: () => {
        here.push(1);
        collected();
      },
    });
    engine.runningTurns = 1;
    gc.activity(engine);
    engine.runningTurns = 0;
    gc.activity(engine);
    await done;
    expect(here).toHaveLength(1);
    expect(asked).toEqual(['mcp', 'api']);
    gc.clear();
  });

  it('collects every few turns of a busy stretch without waiting for quiet, never while a turn runs', () => {
    const { engine, asked } = fakeEngine();
    let here = 0;
    const gc = collectWhenQuiet({
      quietMs: 60_000,
      turnsPerCollection: 3,
      collectHere: () => here++,
    });
    const turn = () => {
      engine.runningTurns = 1;
      gc.activity(engine);
      engine.runningTurns = 0;
      gc.activity(engine);
    };
    turn();
    turn();
    expect(here).toBe(0);
    engine.runningTurns = 1;
    gc.activity(engine);
    expect(here).toBe(0);
    engine.runningTurns = 0;
    gc.activity(engine);
    expect(here).toBe(1);
    expect(asked).toEqual(['mcp', 'api']);
    for (let i = 0; i < 6; i++) turn();
    expect(here).toBe(3);
    gc.clear();
  });
});
