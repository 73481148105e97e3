import type { MessagePort } from 'node:worker_threads';
import {
  SCAN_TASK,
  WALK_TASK,
  type ScanChunk,
  type ScanResult,
  type SearchAsk,
  type SearchReply,
  type WalkAnswer,
  type WalkRequest,
} from '../../workers/protocol/search.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import type { ToolContext, ToolTask } from '../../workers/protocol/tools.ts';
import { whenAborted } from '../../workers/shared/abort.ts';

// A search's chunks on the tools pool's threads: its lead task (grep, glob — listing, ordering,
// answering in a thread of its own) asks for them on its port, and they run here as tasks of
// their own, as many at once as it asks. Each chunk shares a beat with its
// thread: the windows it read, a cancel flag, the file it is on. A regular expression stuck on one
// file (a backreference that backtracks without end: JavaScript cannot interrupt it) stops the
// beat; past the time a file may take its thread is ended — piscina starts another — the file is
// named as too slow, and the chunk's other files are searched again without it.

/** How the executor runs a task: the pool's `run`, with a signal that ends the thread. */
type RunTask = (task: ToolTask, signal: AbortSignal) => Promise<ToolResult>;

const WATCH_MS = 100;

/**
 * Watches a chunk's beat ([windows read, cancel, file index]) and calls `onStuck` with the file
 * index once it has stood still for `ms` after the chunk started. Returns what stops watching.
 */
const watchBeat = (
  view: Int32Array,
  ms: number,
  onStuck: (index: number) => void,
): (() => void) => {
  let last = -1;
  let still = 0;
  const timer = setInterval(() => {
    // Not started yet (waiting for a thread): no file is slow.
    if (Atomics.load(view, 0) === 0) return;
    const now = Atomics.load(view, 0) * 65_536 + Atomics.load(view, 2);
    still = now === last ? still + WATCH_MS : 0;
    last = now;
    if (still >= ms) {
      clearInterval(timer);
      onStuck(Atomics.load(view, 2));
    }
  }, WATCH_MS);
  timer.unref();
  return () => clearInterval(timer);
};

type Scanned = ScanResult & { slow?: number[] };

/** What a search's result says of how far it got (its `structured`). */
interface SearchStructured {
  searched: number;
  listed: number | null;
  found: number;
}

/** A task's result as the worker sent it (`structured`), or the error it became. */
const unwrap = <T>(result: ToolResult): T => {
  if (!result.ok) throw new Error(result.error.message);
  return result.structured as T;
};

/** The files of `chunk` but `skip`, their results' indexes mapped back to `chunk`'s. */
const without = (chunk: ScanChunk, skip: number): { chunk: ScanChunk; index: number[] } => {
  const index = chunk.files.map((_, i) => i).filter((i) => i !== skip);
  return { chunk: { ...chunk, files: index.map((i) => chunk.files[i]!) }, index };
};

/** Runs a lead task's chunks and walks on the pool, answering on its port. */
export class SearchRelay {
  readonly #running = new Map<number, AbortController>();
  #closed = false;
  #reported = -1;
  #leadFiles: string[] = [];
  #stopLead: () => void = () => undefined;

  constructor(
    private readonly runTask: RunTask,
    private readonly context: ToolContext,
    private readonly port: MessagePort,
    /** Milliseconds a file may go without a window read before its thread is ended. */
    private readonly fileMs: number,
    private readonly onProgress:
      ((progress: { progress: number; total?: number; message?: string }) => void) | undefined,
    /** The lead's own chunk held its thread on `file` too long: it is to be ended. */
    private readonly onStuck: (file: string) => void,
  ) {}

  /** Takes one ask of the lead task. */
  handle(ask: SearchAsk): void {
    if (ask.type === 'beat') {
      this.#stopLead = watchBeat(new Int32Array(ask.beat), this.fileMs, (index) =>
        this.onStuck(this.#leadFiles[index] ?? '(unknown file)'),
      );
      return;
    }
    if (ask.type === 'files') {
      this.#leadFiles = ask.files;
      return;
    }
    if (ask.type === 'progress') {
      const { type: _type, ...progress } = ask;
      if (!this.#closed && progress.progress > this.#reported) {
        this.#reported = progress.progress;
        this.onProgress?.(progress);
      }
      return;
    }
    if (ask.type === 'drop') {
      this.#running.get(ask.id)?.abort();
      this.#running.delete(ask.id);
      return;
    }
    const controller = new AbortController();
    this.#running.set(ask.id, controller);
    const work =
      ask.type === 'scan'
        ? this.scan(ask.chunk, controller.signal).then((result): SearchReply => ({
            type: 'scanned',
            id: ask.id,
            result,
          }))
        : this.walk(ask.request, controller.signal).then((answer): SearchReply => ({
            type: 'walked',
            id: ask.id,
            answer,
          }));
    void work
      .catch((error: unknown): SearchReply => ({
        type: 'failed',
        id: ask.id,
        message: String(error),
      }))
      .then((reply) => {
        this.#running.delete(ask.id);
        if (!this.#closed && !controller.signal.aborted) this.port.postMessage(reply);
      });
  }

  /**
   * The lead's last progress, from its result: the result comes on another channel than the
   * lead's progress messages and may overtake them; nothing after it is passed on.
   */
  finish(result: ToolResult): void {
    const done = result.ok
      ? (result.structured as Partial<SearchStructured> | undefined)
      : undefined;
    if (done?.searched !== undefined && done.searched > this.#reported) {
      this.#reported = done.searched;
      this.onProgress?.({
        progress: done.searched,
        ...(typeof done.listed === 'number' ? { total: done.listed } : {}),
        message: `${done.searched} files searched, ${done.found ?? 0} found`,
      });
    }
    this.close();
  }

  /** The lead task ended: what it asked for and still runs is stopped. */
  close(): void {
    this.#closed = true;
    this.#stopLead();
    for (const controller of this.#running.values()) controller.abort();
    this.#running.clear();
  }

  async scan(chunk: ScanChunk, signal: AbortSignal): Promise<Scanned> {
    const slow: number[] = [];
    let index = chunk.files.map((_, i) => i);
    for (let current = chunk; ;) {
      const outcome = await this.#watched(current, signal);
      if ('result' in outcome) {
        const result = outcome.result;
        const hits = result.hits.map((hit) => ({ ...hit, i: index[hit.i]! }));
        const dirs = result.dirs;
        const stoppedAt = result.stoppedAt === undefined ? undefined : index[result.stoppedAt];
        return {
          ...result,
          hits,
          dirs,
          ...(stoppedAt === undefined ? {} : { stoppedAt }),
          ...(slow.length ? { slow } : {}),
        };
      }
      slow.push(index[outcome.stuck]!);
      const next = without(current, outcome.stuck);
      index = next.index.map((i) => index[i]!);
      current = next.chunk;
    }
  }

  /** One run of a chunk: its result, or the file it got stuck on (its thread ended). */
  async #watched(
    chunk: ScanChunk,
    signal: AbortSignal,
  ): Promise<{ result: Scanned } | { stuck: number }> {
    const beat = new SharedArrayBuffer(12);
    const view = new Int32Array(beat);
    const end = new AbortController();
    let stuck: number | undefined;
    const stopWatch = watchBeat(view, this.fileMs, (index) => {
      stuck = index;
      end.abort();
    });
    const offAbort = whenAborted(signal, () => {
      // Not started yet: taken off the queue. Running: it stops between files.
      if (Atomics.load(view, 0) === 0) end.abort();
      else Atomics.store(view, 1, 1);
    });
    try {
      const task: ToolTask = { tool: SCAN_TASK, args: { ...chunk, beat }, context: this.context };
      const result = await this.runTask(task, end.signal).catch((error: unknown) => {
        if (stuck !== undefined) return undefined;
        throw error;
      });
      if (stuck !== undefined || !result) return { stuck: stuck ?? 0 };
      return { result: unwrap<Scanned>(result) };
    } finally {
      stopWatch();
      offAbort();
    }
  }

  /** A walk: it stops at the search's deadline; a cancel leaves it to end there (no thread lost). */
  async walk(request: WalkRequest, signal: AbortSignal): Promise<WalkAnswer> {
    const task: ToolTask = { tool: WALK_TASK, args: request, context: this.context };
    const walked = this.runTask(task, new AbortController().signal).then(unwrap<WalkAnswer>);
    const canceled = new Promise<WalkAnswer>((resolve) =>
      whenAborted(signal, () => resolve({ files: [], stopped: true, unreadable: [] })),
    );
    return Promise.race([walked, canceled]);
  }
}
