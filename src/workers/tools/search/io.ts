import type { ScanChunk, ScanResult, WalkAnswer, WalkRequest } from '../../protocol/search.ts';

/** Where the chunks of a search run: the pool's threads, or the calling thread itself. */
export interface SearchExecutor {
  /** Chunks run at once. */
  readonly parallel: number;
  /** A chunk's result; `slow` lists the files (indexes) ended for taking too long. */
  scan(chunk: ScanChunk, signal: AbortSignal): Promise<ScanResult & { slow?: number[] }>;
  /**
   * A chunk run in the calling thread, where `scan` runs it elsewhere: the first chunk of a search
   * with a `head_limit`, whose answer may be all it needs, before another thread could start on
   * it. (A file that holds it too long fails the search: its thread is this one.)
   */
  inline?: SearchExecutor['scan'];
  walk(request: WalkRequest, signal: AbortSignal): Promise<WalkAnswer>;
}

export interface SearchProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface SearchIo {
  signal: AbortSignal;
  onProgress?: ((progress: SearchProgress) => void) | undefined;
}
