import path from 'node:path';
import type {
  ScanChunk,
  ScanHit,
  ScanSkips,
  WalkAnswer,
  WalkRequest,
} from '../../protocol/search.ts';
import type { ToolContext } from '../../protocol/tools.ts';
import { whenAborted } from '../../shared/abort.ts';
import type { Resolved } from '../sandbox.ts';
import { Answer } from './answer.ts';
import { isStale, type Flight } from './flight.ts';
import { globalExcludes, hasGitAbove } from './git-list.ts';
import { Listing } from './listing.ts';
import type { SearchExecutor, SearchIo } from './io.ts';
import type { SearchSpec } from './spec.ts';

// One grep or glob over a directory: the files listed (git, or a walk), handed out in chunks to
// the executor's threads — as many at once as it has — and their results taken back in the
// listing's order into the answer, which stops taking at head_limit or the output budget. At the
// time budget no chunk is handed out; those running stop between files and are taken. Either way
// the answer says how far it got and how to go on.

/** Characters of text a chunk keeps before it only counts. */
const CHUNK_TEXT = 64 * 1024;
/** Characters of a line shown. */
const MAX_LINE = 300;
const FIRST_CHUNK = 16;
const LAST_CHUNK = 512;
const PROGRESS_MS = 250;

let searches = 0;

const emptySkips = (): ScanSkips => ({ binary: 0, refused: 0, gone: 0, longLines: 0 });

export class Search {
  readonly id = `${process.pid}-${Date.now()}-${++searches}`;
  readonly started = Date.now();
  readonly deadline: number;
  readonly answer: Answer;
  readonly listing: Listing;
  readonly skips = emptySkips();
  readonly slow: string[] = [];
  readonly unreadable: string[] = [];
  /** glob: the files found, sorted by modification time at the end. */
  readonly found: { shown: string; mtime: number }[] = [];
  readonly #flights = new Map<number, Promise<Flight>>();
  readonly #done = new Map<number, Flight>();
  readonly #controller = new AbortController();
  #global = '';
  /** Listing index from which files come decided by the rules (a walk's). */
  #decidedFrom = Infinity;
  #expired = false;
  #keptChecked = false;
  #reported = -1;
  /** The listing's first part came (git's index, or the walk): time may end the search now. */
  #listed = false;
  #wake: () => void = () => undefined;
  #next = 0;
  #chunks = 0;
  #committed = 0;
  #size = FIRST_CHUNK;
  searched = 0;
  /** Files listed that were not searched: left out by the rules, gone, refused. */
  #leftOut = 0;
  /** Listing index of the first file not looked at when time ran out. */
  stoppedAt: number | undefined;
  stop: 'time' | 'full' | 'canceled' | undefined;

  constructor(
    readonly spec: SearchSpec,
    readonly target: Resolved,
    readonly top: string,
    readonly context: ToolContext,
    readonly exec: SearchExecutor,
    readonly io: SearchIo,
  ) {
    this.deadline = this.started + context.limits.searchSeconds * 1000;
    this.answer = new Answer(spec, context.limits.maxChars);
    const base = path.relative(top, target.real).split(path.sep).join('/');
    this.listing = new Listing(target.real, base, top, spec.keep);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Lists the directory: with git where it can, else by a walk. */
  async list(): Promise<void> {
    try {
      await this.#list();
    } finally {
      this.#listed = true;
      this.#wake();
    }
  }

  async #list(): Promise<void> {
    this.#global = globalExcludes(this.target.policy);
    if (await this.listing.fromGit(this.target.policy, this.#global)) return;
    this.listing.inRepo = hasGitAbove(this.target.real);
    const answer = await this.exec.walk(this.#walkRequest(''), this.signal);
    this.#walkedInto('', answer);
    this.listing.finish();
  }

  /** Searches `file` alone, named as the path: ripgrep searches it whatever the rules say. */
  only(file: string): void {
    this.#decidedFrom = 0;
    this.#listed = true;
    this.listing.addWalked([file]);
    this.listing.finish();
  }

  #walkRequest(sub: string): WalkRequest {
    return {
      top: this.top,
      base: [this.listing.base, sub].filter(Boolean).join('/'),
      policy: this.target.policy,
      inRepo: this.listing.inRepo,
      global: this.#global,
      hidden: this.spec.hidden,
      deadline: this.deadline,
    };
  }

  #walkedInto(sub: string, answer: WalkAnswer): void {
    const prefix = sub ? `${sub}/` : '';
    this.#decidedFrom = Math.min(this.#decidedFrom, this.listing.files.length);
    this.listing.addWalked(answer.files.map((file) => prefix + file));
    this.unreadable.push(...answer.unreadable.map((dir) => this.#shown(prefix + dir)));
    if (answer.stopped) this.#expire();
  }

  #expire(): void {
    this.#expired = true;
    this.#wake();
  }

  #chunk(
    flight: Pick<Flight, 'files' | 'version' | 'decided'>,
    textFrom = 0,
    maxText = CHUNK_TEXT,
  ): ScanChunk {
    const { spec, listing } = this;
    const rules = {
      dirs: listing.ruleDirs,
      repos: listing.repos,
      inRepo: listing.inRepo,
      global: this.#global,
      hidden: spec.hidden,
    };
    return {
      search: `${this.id}:${flight.version}`,
      top: this.top,
      base: listing.base,
      files: flight.files,
      ...(flight.decided ? {} : { rules }),
      policy: this.target.policy,
      ...(spec.pattern ? { pattern: spec.pattern } : {}),
      mode: spec.mode,
      before: spec.before,
      after: spec.after,
      maxTextChars: maxText,
      textFrom,
      maxLineChars: MAX_LINE,
      deadline: this.deadline,
    };
  }

  /** Hands out the next chunk of the listing (never across the start of walked files). */
  #dispatch(): void {
    const { files, version } = this.listing;
    const start = this.#next;
    const decided = start >= this.#decidedFrom;
    const end = Math.min(start + this.#size, decided ? Infinity : this.#decidedFrom);
    const chunk = files.slice(start, end);
    this.#next += chunk.length;
    this.#size = Math.min(this.#size * 2, LAST_CHUNK);
    this.#fly({ index: this.#chunks++, start, files: chunk, version, decided });
  }

  #fly(flight: Flight): void {
    const chunk = this.#chunk(flight);
    const { exec } = this;
    const scanned =
      flight.index === 0 && this.#firstInline()
        ? exec.inline!(chunk, this.signal)
        : exec.scan(chunk, this.signal);
    const running = scanned.then((result) => {
      flight.result = result;
      this.#flights.delete(flight.index);
      this.#done.set(flight.index, flight);
      return flight;
    });
    this.#flights.set(flight.index, running);
    // A chunk that failed (its thread died) stops the search: the answer would have a hole.
    running.catch(() => this.#halt('time', flight.start));
  }

  /** The first chunk runs in this thread: a head_limit search, with the pool's threads. */
  #firstInline(): boolean {
    return this.exec.inline !== undefined && this.spec.headLimit !== undefined;
  }

  #canDispatch(): boolean {
    if (this.stop || this.#expired || this.#flights.size >= this.exec.parallel) return false;
    // A head_limit search's first chunk, run here, may be all it needs: nothing else competes
    // with it for the cores until it is back.
    if (this.#firstInline() && this.#committed === 0 && this.#flights.size > 0) return false;
    const waiting = this.listing.files.length - this.#next;
    if (waiting <= 0) return false;
    return waiting >= this.#size || this.listing.done || this.#flights.size === 0;
  }

  #halt(reason: 'time' | 'full' | 'canceled', at: number | undefined): void {
    if (this.stop) return;
    this.stop = reason;
    if (reason === 'time') this.stoppedAt = at;
    this.#controller.abort();
    this.listing.stop();
    this.#wake();
  }

  /** Dispatches, waits and commits until the listing is searched or the search stops. */
  async drive(): Promise<void> {
    const offAbort = whenAborted(this.io.signal, () => this.#halt('canceled', undefined));
    const timer = setTimeout(() => this.#expire(), Math.max(0, this.deadline - Date.now()));
    const { onProgress } = this.io;
    const progress = onProgress ? setInterval(() => this.#progress(), PROGRESS_MS) : undefined;
    try {
      while (!this.stop) {
        const woken = new Promise<void>((resolve) => (this.#wake = resolve));
        while (this.#canDispatch()) this.#dispatch();
        if (this.#flights.size === 0 && this.#done.size === 0) {
          if (this.#expired && this.#listed) break;
          if (this.listing.done && this.#next >= this.listing.files.length) {
            if (await this.#walkMore()) continue;
            break;
          }
          await Promise.race([this.listing.more, woken]);
          continue;
        }
        await Promise.race([...this.#flights.values(), this.listing.more, woken]).catch(() => {});
        await this.#commitReady();
      }
      if (!this.stop && this.#expired && this.#unsearched()) this.#halt('time', this.#next);
    } finally {
      clearTimeout(timer);
      clearInterval(progress);
      offAbort();
      this.listing.stop();
    }
    // The last word on progress, however short the search (its owner says it again from the
    // result, which may overtake this message).
    if (onProgress && this.stop !== 'canceled') this.#progress();
  }

  #unsearched(): boolean {
    const { listing } = this;
    return !listing.done || this.#next < listing.files.length || listing.nested.length > 0;
  }

  /**
   * Walks what git's listing may have missed: nested repositories and submodules met, and
   * directories whose .ignore keeps back what .gitignore leaves out. False when there is none.
   */
  async #walkMore(): Promise<boolean> {
    const nested = this.listing.nested.splice(0);
    const kept = this.#keptChecked ? [] : this.listing.kept(this.target.policy);
    this.#keptChecked = true;
    if (nested.length === 0 && kept.length === 0) return false;
    for (const [dir, inRepo] of [
      ...kept.map((d) => [d, this.listing.inRepo] as const),
      ...nested.map((d) => [d, true] as const),
    ]) {
      if (this.stop || this.#expired) break;
      // Files already listed there are left out of the walk's answer.
      const prefix = dir ? `${dir}/` : '';
      const known = this.listing.files
        .filter((file) => file.startsWith(prefix))
        .map((file) => file.slice(prefix.length));
      const request = { ...this.#walkRequest(dir), inRepo, known };
      this.#walkedInto(dir, await this.exec.walk(request, this.signal));
    }
    return true;
  }

  /** Progress, when the search got further since the last (MCP wants it to grow each time). */
  #progress(): void {
    if (this.searched <= this.#reported) return;
    this.#reported = this.searched;
    const total = this.total() ?? undefined;
    const found = this.spec.tool === 'glob' ? this.found.length : this.answer.matches;
    this.io.onProgress?.({
      progress: this.searched,
      ...(total !== undefined ? { total } : {}),
      message: `${this.searched} files searched, ${found} found`,
    });
  }

  /** Commits the chunks done, in order. */
  async #commitReady(): Promise<void> {
    for (;;) {
      const flight = this.#done.get(this.#committed);
      if (!flight || this.stop) return;
      this.#done.delete(this.#committed);
      if (isStale(this.listing, flight)) {
        flight.version = this.listing.version;
        delete flight.result;
        this.#fly(flight);
        return;
      }
      this.#committed++;
      await this.#commit(flight);
    }
  }

  #shown(rel: string): string {
    const { display } = this.target;
    return display === '.' ? rel : `${display}/${rel}`;
  }

  async #commit(flight: Flight): Promise<void> {
    const result = flight.result!;
    this.searched += result.searched;
    this.#leftOut += result.ruled + result.skips.gone + result.skips.refused;
    for (const key of Object.keys(this.skips) as (keyof ScanSkips)[])
      this.skips[key] += result.skips[key];
    for (const i of result.slow ?? []) this.slow.push(this.#shown(flight.files[i]!));
    this.listing.nested.push(...result.dirs);
    for (const hit of result.hits) {
      const rel = flight.files[hit.i]!;
      if (this.spec.tool === 'glob') {
        this.found.push({ shown: this.#shown(rel), mtime: hit.mtime ?? 0 });
        continue;
      }
      this.answer.hit(this.#shown(rel), await this.#withText(rel, hit, flight.decided));
      if (!this.answer.taking) return this.#halt('full', undefined);
    }
    if (result.stoppedAt !== undefined && !this.io.signal.aborted)
      this.#halt('time', flight.start + result.stoppedAt);
  }

  /** `hit` with the text the answer will show, fetched again when its chunk kept too little. */
  async #withText(rel: string, hit: ScanHit, decided: boolean): Promise<ScanHit> {
    const from = this.answer.missing(hit);
    if (from === undefined) return hit;
    const flight = { files: [rel], version: this.listing.version, decided };
    const chunk = this.#chunk(flight, from, this.context.limits.maxChars * 2);
    const again = await this.exec.scan(chunk, this.signal).catch(() => undefined);
    const fetched = again?.hits[0];
    return fetched ? { ...fetched, i: hit.i, count: hit.count } : hit;
  }

  /**
   * Files to search in all, once the listing is done (null before): those listed less those the
   * rules left out (or gone, or refused) as far as the search got.
   */
  total(): number | null {
    return this.listing.done ? this.listing.files.length - this.#leftOut : null;
  }

  /** The directories not searched yet from listing index `from` on, as paths to continue with. */
  unsearchedPaths(from: number): string[] {
    const paths: string[] = [];
    for (const rel of this.listing.files.slice(from)) {
      const first = rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : rel;
      // Hidden names are skipped unless a rule keeps them: not worth proposing.
      if (first.startsWith('.') && !this.spec.hidden) continue;
      const shown = this.#shown(first);
      if (paths.at(-1) !== shown) paths.push(shown);
      if (paths.length > 50) break;
    }
    return paths;
  }
}
