// A full garbage collection of this thread's heap, for a daemon that has gone quiet. V8 collects
// when allocation makes it, not when a program stops allocating: a daemon that served a burst of
// turns keeps their garbage — tens of MiB over its threads after a few hundred one-shot turns,
// though what they keep alive stays flat — until the next burst. Node exposes no collection but
// through --expose-gc; the flag, set now, gives a new context the `gc` function.

let gc: (() => void) | undefined;

/** Collects this thread's garbage now (a few ms for a daemon's heaps). */
export const collectGarbage = (): void => {
  if (!gc) {
    process.getBuiltinModule('node:v8').setFlagsFromString('--expose-gc');
    gc = process.getBuiltinModule('node:vm').runInNewContext('gc') as () => void;
  }
  gc();
};
