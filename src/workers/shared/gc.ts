// A full garbage collection of this thread's heap, for a daemon that has gone quiet or run a busy
// stretch of turns (daemon/quiet-gc.ts asks). V8 collects when allocation makes it, not when a
// program stops allocating: a daemon that served a burst of turns keeps their garbage — tens of
// MiB over its threads after a few hundred one-shot turns, though what they keep alive stays
// flat — until the next burst. Node exposes no collection but through --expose-gc; the flag, set
// now, gives a new context the `gc` function.
//
// A full collection is not free: 20-30 ms of CPU for one of the daemon's 10-17 MiB heaps, two
// thirds of it in V8's helper threads (measured on a loaded two-core machine). Asked because the
// daemon went quiet, a thread collects only if it holds enough that only a full collection gives
// back: its old generation (what outlived the scavenges of its young one) and its external memory
// (ArrayBuffers' bytes) grown by GROWTH_WORTH_COLLECTING since its last collection. A burst of
// `mcp call`s grows them by 0.1 MiB or less per thread, a one-shot turn by 0.1-0.3 MiB in the
// engine's and the API worker's threads. The young generation is left out: a scavenge empties it.

/** Old-generation and external growth, in bytes, that makes a full collection worth its CPU. */
export const GROWTH_WORTH_COLLECTING = 1024 * 1024;

/** What only a full collection gives back of this thread's heap, as it stands: bytes. */
const fullCollectableBytes = (): number => {
  const v8 = process.getBuiltinModule('node:v8');
  let bytes = v8.getHeapStatistics().external_memory;
  for (const space of v8.getHeapSpaceStatistics()) {
    // new_space, new_large_object_space: the young generation.
    if (!space.space_name.startsWith('new_')) bytes += space.space_used_size;
  }
  return bytes;
};

/** V8's `gc` function (from the gc extension): a full collection, or with options another kind. */
type Gc = (options?: { type: 'major'; flavor: 'last-resort' }) => void;

let gc: Gc | undefined;

/** This thread's `gc`, fetched once (the flag, set now, gives a new context the function). */
export const gcFunction = (): Gc => {
  if (!gc) {
    process.getBuiltinModule('node:v8').setFlagsFromString('--expose-gc');
    gc = process.getBuiltinModule('node:vm').runInNewContext('gc') as Gc;
  }
  return gc;
};

/** A full collection of this thread's heap, now. */
export const fullCollection = (): void => gcFunction()();

interface CollectorOptions {
  /** Reads what only a full collection gives back (fullCollectableBytes). */
  measure?: () => number;
  /** Collects (fullCollection). */
  collect?: () => void;
  /** Growth since the last collection that makes `collectIfGrown` collect (GROWTH_WORTH_COLLECTING). */
  minGrowth?: number;
}

/**
 * A thread's collections. `collect()` collects whatever the heap holds; `collectIfGrown()` only
 * when what a full collection gives back has grown by `minGrowth` since the last collection, and
 * says whether it did. Before any collection, the heap as the first `collectIfGrown` finds it is
 * the floor: a thread's start leaves little garbage (0.5-0.9 MiB of 10-17 MiB in the daemon's
 * threads), and collecting it does not lower the thread's resident size.
 */
export const collector = ({
  measure = fullCollectableBytes,
  collect: collectAll = fullCollection,
  minGrowth = GROWTH_WORTH_COLLECTING,
}: CollectorOptions = {}) => {
  let floor: number | undefined;
  const collect = (): void => {
    collectAll();
    floor = measure();
  };
  return {
    collect,
    collectIfGrown: (): boolean => {
      const now = measure();
      floor ??= now;
      if (now - floor < minGrowth) return false;
      collect();
      return true;
    },
  };
};

const thisThread = collector();

/**
 * Collects this thread's garbage: `always` (after a busy stretch of turns) whatever it holds,
 * otherwise if it has grown enough since the last collection to be worth one (see `collector`).
 * Says whether it collected.
 */
export const collectGarbage = (always = false): boolean => {
  if (!always) return thisThread.collectIfGrown();
  thisThread.collect();
  return true;
};
