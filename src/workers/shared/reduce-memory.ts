// A collection that gives back what a thread's heap grew into, for a daemon that has just warmed
// itself. A thread's start-up — loading its code, a client library, building the tools'
// definitions — makes V8 grow its young generation (the daemon's thread to 16 MiB: its size is
// not capped, see threads/entry.ts) and keep the pages it freed for reuse. A plain full
// collection (shared/gc.ts) keeps both; only a memory-reducing one gives them back, and V8 runs
// one by itself (its memory reducer) only ~20 s after a thread has gone idle. The gc extension's
// `last-resort` flavour is that collection (Heap::CollectAllAvailableGarbage): a few full
// collections that shrink the young generation to its floor, compact, and unmap the pooled pages.
// Node exposes it only through --expose-gc (shared/gc.ts fetches the function, once a thread).

import { gcFunction } from './gc.ts';

/** This thread's V8 heap, as the operating system sees it (committed bytes) and as it is used. */
interface HeapSize {
  committedBytes: number;
  usedBytes: number;
}

const heapSize = (): HeapSize => {
  const stats = process.getBuiltinModule('node:v8').getHeapStatistics();
  return { committedBytes: stats.total_heap_size, usedBytes: stats.used_heap_size };
};

/** What a reduction did: the heap before and after, and how long the thread was held. */
export interface Reduction {
  before: HeapSize;
  after: HeapSize;
  ms: number;
}

/**
 * Collects this thread's garbage and gives back the space its heap grew into (tens of ms for a
 * daemon's heaps: for a quiet moment).
 */
export const reduceMemory = (): Reduction => {
  const gc = gcFunction();
  const before = heapSize();
  const start = performance.now();
  gc({ type: 'major', flavor: 'last-resort' });
  return { before, after: heapSize(), ms: performance.now() - start };
};

/** A reduction in words, for a log line: `heap 30.9 → 14.4 MiB (12.7 MiB in use), 21 ms`. */
export const describeReduction = ({ before, after, ms }: Reduction): string => {
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  return `heap ${mib(before.committedBytes)} → ${mib(after.committedBytes)} MiB (${mib(after.usedBytes)} MiB in use), ${Math.round(ms)} ms`;
};
