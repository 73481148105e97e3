import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { collectWhenQuiet, type Collectable } from '../../../src/main/daemon/quiet-gc.ts';
import {
  collectGarbage,
  collector,
  fullCollection,
  GROWTH_WORTH_COLLECTING,
} from '../../../src/workers/shared/gc.ts';

// A daemon's threads collect the garbage of the turns it ran (src/main/daemon/quiet-gc.ts): all
// of it every few turns, and when the daemon goes quiet only if it grew enough to be worth a full
// collection (src/workers/shared/gc.ts); never while a turn runs.

/** An engine as the scheduler sees it, recording what each of its threads was asked. */
const fakeEngine = () => {
  const asked: string[] = [];
  const ask = (thread: string) => (always: boolean) =>
    asked.push(always ? `${thread} always` : `${thread} if grown`);
  const engine: Collectable & { runningTurns: number } = {
    runningTurns: 0,
    mcp: { collectGarbage: ask('mcp') },
    api: { collectGarbage: ask('api') },
  };
  return { engine, asked };
};

const MIB = 1024 * 1024;

/** A heap whose full-collectable bytes the test sets, and the collections made of it. */
const fakeHeap = (bytes: number) => {
  const heap = { bytes, collections: 0, liveAfter: bytes };
  const gc = collector({
    minGrowth: 2 * MIB,
    measure: () => heap.bytes,
    collect: () => {
      heap.collections++;
      heap.bytes = heap.liveAfter;
    },
  });
  return { heap, gc };
};

describe('fullCollection', () => {
  it('collects what nothing holds any more', async () => {
    const ref = new WeakRef(Array.from({ length: 100_000 }, (_, i) => i));
    // A WeakRef's target lives to the end of the job that made or read it.
    await tick();
    fullCollection();
    expect(ref.deref()).toBeUndefined();
  });
});

describe('collector', () => {
  it('takes the heap its first call finds as the floor, without collecting', () => {
    const { heap, gc } = fakeHeap(20 * MIB);
    expect(gc.collectIfGrown()).toBe(false);
    heap.bytes += 1.5 * MIB;
    expect(gc.collectIfGrown()).toBe(false);
    heap.bytes += MIB;
    expect(gc.collectIfGrown()).toBe(true);
    expect(heap.collections).toBe(1);
  });

  it('skips a collection until the heap has grown by the threshold since the last one', () => {
    const { heap, gc } = fakeHeap(20 * MIB);
    gc.collect();
    // A burst of calls: a little garbage.
    heap.bytes += MIB;
    expect(gc.collectIfGrown()).toBe(false);
    heap.bytes += MIB / 2;
    expect(gc.collectIfGrown()).toBe(false);
    expect(heap.collections).toBe(1);
    // Turns: what accumulated since the last collection is worth one.
    heap.bytes += MIB / 2;
    expect(gc.collectIfGrown()).toBe(true);
    expect(heap.collections).toBe(2);
  });

  it('measures growth from what the last collection left, not from what it found', () => {
    const { heap, gc } = fakeHeap(40 * MIB);
    heap.liveAfter = 21 * MIB;
    gc.collect();
    // 17.5 MiB below what it found, 1.5 above what it left: not grown enough.
    heap.bytes = 22.5 * MIB;
    expect(gc.collectIfGrown()).toBe(false);
    // Live data that grew with the garbage is the next floor.
    heap.bytes = 23 * MIB;
    heap.liveAfter = 22 * MIB;
    expect(gc.collectIfGrown()).toBe(true);
    heap.bytes = 23.5 * MIB;
    expect(gc.collectIfGrown()).toBe(false);
  });

  it('on a real heap: collects once it grew by the threshold, then measures from what stayed', async () => {
    const gc = collector();
    gc.collect();
    expect(gc.collectIfGrown()).toBe(false);
    // An ArrayBuffer's bytes are the thread's external memory.
    const held = new ArrayBuffer(2 * GROWTH_WORTH_COLLECTING);
    const garbage = new WeakRef({ turn: 'over' });
    await tick();
    expect(gc.collectIfGrown()).toBe(true);
    expect(garbage.deref()).toBeUndefined();
    expect(gc.collectIfGrown()).toBe(false);
    expect(held.byteLength).toBe(2 * GROWTH_WORTH_COLLECTING);
  });
});

describe('collectGarbage', () => {
  it("collects this thread's garbage when told to always, and not again until it has grown", () => {
    expect(collectGarbage(true)).toBe(true);
    expect(collectGarbage()).toBe(false);
  });
});

describe('collectWhenQuiet', () => {
  it('asks every thread to collect if grown once the daemon has been quiet for a moment', async () => {
    const { engine, asked } = fakeEngine();
    let collected!: () => void;
    const done = new Promise<void>((resolve) => (collected = resolve));
    const here: boolean[] = [];
    const gc = collectWhenQuiet({
      quietMs: 1,
      collectHere: (always) => {
        here.push(always);
        collected();
      },
    });
    engine.runningTurns = 1;
    gc.activity(engine);
    engine.runningTurns = 0;
    gc.activity(engine);
    await done;
    expect(here).toEqual([false]);
    expect(asked).toEqual(['mcp if grown', 'api if grown']);
    gc.clear();
  });

  it('has every thread collect all every few turns without waiting for quiet, never while a turn runs', () => {
    const { engine, asked } = fakeEngine();
    const here: boolean[] = [];
    const gc = collectWhenQuiet({
      quietMs: 60_000,
      turnsPerCollection: 3,
      collectHere: (always) => here.push(always),
    });
    const turn = () => {
      engine.runningTurns = 1;
      gc.activity(engine);
      engine.runningTurns = 0;
      gc.activity(engine);
    };
    turn();
    turn();
    expect(here).toEqual([]);
    engine.runningTurns = 1;
    gc.activity(engine);
    expect(here).toEqual([]);
    engine.runningTurns = 0;
    gc.activity(engine);
    expect(here).toEqual([true]);
    expect(asked).toEqual(['mcp always', 'api always']);
    for (let i = 0; i < 6; i++) turn();
    expect(here).toEqual([true, true, true]);
    gc.clear();
  });

  it('counts the turns since the last full collection across quiet moments', async () => {
    const { engine, asked } = fakeEngine();
    let quiet!: () => void;
    const here: boolean[] = [];
    const gc = collectWhenQuiet({
      quietMs: 1,
      turnsPerCollection: 3,
      collectHere: (always) => {
        here.push(always);
        if (!always) quiet();
      },
    });
    const turn = () => {
      engine.runningTurns = 1;
      gc.activity(engine);
      engine.runningTurns = 0;
      gc.activity(engine);
    };
    const quietMoment = () => new Promise<void>((resolve) => (quiet = resolve));
    for (let i = 0; i < 2; i++) {
      const moment = quietMoment();
      turn();
      await moment;
    }
    expect(here).toEqual([false, false]);
    turn();
    expect(here).toEqual([false, false, true]);
    expect(asked.slice(-2)).toEqual(['mcp always', 'api always']);
    gc.clear();
  });
});
