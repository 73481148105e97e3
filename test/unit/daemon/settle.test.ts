import { getHeapSpaceStatistics } from 'node:v8';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { settleOnceWarm, type Settleable } from '../../../src/main/daemon/settle.ts';
import { collectGarbage } from '../../../src/workers/shared/gc.ts';
import { reduceMemory, type Reduction } from '../../../src/workers/shared/reduce-memory.ts';

// A daemon that has warmed itself gives back what its start-up grew in its own thread (the
// workers' young generations are capped), once quiet with nobody attached (src/main/daemon/settle.ts); the collection that does
// it (src/workers/shared/reduce-memory.ts) gives back the young generation a plain one keeps.

const MIB = 1024 * 1024;
const youngGeneration = () =>
  getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size;

describe('reduceMemory', () => {
  it('gives back the young generation a start-up grew, which a plain collection keeps', () => {
    // Objects that survive their first scavenges, as a start-up's module code and data do: V8
    // grows the young generation to take them.
    const kept = Array.from({ length: 300_000 }, (_, i) => ({ i, name: `entry ${i}`, list: [i] }));
    expect(youngGeneration()).toBeGreaterThan(2 * MIB);
    const grown = youngGeneration();
    collectGarbage();
    expect(youngGeneration()).toBe(grown);
    const reduction = reduceMemory();
    expect(youngGeneration()).toBeLessThanOrEqual(MIB);
    expect(reduction.after.committedBytes).toBeLessThan(reduction.before.committedBytes - MIB);
    expect(reduction.after.usedBytes).toBeGreaterThan(kept.length * 16);
  });
});

/** An engine as the schedule sees it. */
const fakeEngine = () => {
  const engine: Settleable & { clients: number; runningTurns: number } = {
    clients: 0,
    runningTurns: 0,
  };
  return { engine };
};

const noReduction: Reduction = {
  before: { committedBytes: 2 * MIB, usedBytes: MIB },
  after: { committedBytes: MIB, usedBytes: MIB },
  ms: 1,
};

/** A schedule on fake timers, quiet after 2 s; `here` records this thread's reductions. */
const schedule = () => {
  const here: string[] = [];
  const lines: string[] = [];
  const settle = settleOnceWarm({
    reduceHere: () => {
      here.push('main');
      return noReduction;
    },
    log: (line) => lines.push(line),
  });
  onTestFinished(settle.clear);
  return { settle, here, lines };
};

describe('settleOnceWarm', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reduces the daemon thread once the daemon has warmed itself and been quiet, and only once', () => {
    const { engine } = fakeEngine();
    const { settle, here, lines } = schedule();
    settle.activity(engine);
    vi.advanceTimersByTime(10_000);
    expect(here).toEqual([]);
    settle.warmed(engine);
    vi.advanceTimersByTime(1_000);
    // A client that came and went (`mcp status`) puts the quiet moment off.
    settle.activity(engine);
    vi.advanceTimersByTime(1_999);
    expect(here).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(here).toEqual(['main']);
    expect(lines).toEqual(['warmed; daemon thread: heap 2.0 → 1.0 MiB (1.0 MiB in use), 1 ms']);
    // Later quiet moments are quiet-gc.ts's.
    engine.runningTurns = 1;
    settle.activity(engine);
    engine.runningTurns = 0;
    settle.activity(engine);
    vi.advanceTimersByTime(10_000);
    expect(here).toEqual(['main']);
  });

  it('waits while a front-end is attached or a turn runs', () => {
    const { engine } = fakeEngine();
    const { settle, here } = schedule();
    // Warmed while a front-end is attached (its prompt is near), then its turn runs.
    engine.clients = 1;
    settle.warmed(engine);
    vi.advanceTimersByTime(10_000);
    engine.runningTurns = 1;
    settle.activity(engine);
    vi.advanceTimersByTime(10_000);
    engine.runningTurns = 0;
    settle.activity(engine);
    vi.advanceTimersByTime(10_000);
    expect(here).toEqual([]);
    // The front-end has gone: quiet.
    engine.clients = 0;
    settle.activity(engine);
    vi.advanceTimersByTime(2_000);
    expect(here).toEqual(['main']);
  });

  it('does not reduce when the timer fires as a turn starts', () => {
    const { engine } = fakeEngine();
    const { settle, here } = schedule();
    settle.warmed(engine);
    // The engine's count changed before it told the schedule.
    engine.runningTurns = 1;
    vi.advanceTimersByTime(2_000);
    expect(here).toEqual([]);
    engine.runningTurns = 0;
    settle.activity(engine);
    vi.advanceTimersByTime(2_000);
    expect(here).toEqual(['main']);
  });
});
