import type { ContentLine, ScanHit, ScanSkips } from '../../protocol/search.ts';
import type { SearchSpec } from './spec.ts';

// The answer of a search, built entry by entry in the search's order: a matched line with its
// context (grep content), a file (files_with_matches, glob), or a file's count. Entries before
// `offset` are only counted; taking stops at `head_limit` or when the next entry would pass the
// output budget — then the answer says the offset to continue from.

/** Why an answer stopped taking entries. */
type Full = 'head' | 'output';

/** Why a search ended before it had looked at everything. */
export interface Incomplete {
  reason: 'time' | 'output';
  /** Files searched, and of how many listed (null while the listing had not finished). */
  searched: number;
  of: number | null;
  /** The offset that continues the answer (the output budget). */
  offset?: number;
  /** Directories not (fully) searched when time ran out, the first to continue with. */
  paths?: string[];
}

export class Answer {
  readonly #lines: string[] = [];
  #chars = 0;
  /** Entries met so far, in order. */
  seen = 0;
  shown = 0;
  full: Full | undefined;
  /** The first entry not shown once full: the offset to continue from. */
  next: number | undefined;
  /** Matching lines and files met (grep), files met (glob). */
  matches = 0;
  files = 0;
  #lastFile = '';
  #lastLine = 0;

  constructor(
    readonly spec: SearchSpec,
    readonly maxChars: number,
  ) {}

  /** Whether entries are still being taken (else only counted). */
  get taking(): boolean {
    return this.full === undefined;
  }

  /** One entry of `lines` (already shown form); false once the answer is full. */
  #offer(lines: string[]): boolean {
    const index = this.seen++;
    if (index < this.spec.offset) return true;
    if (this.full) return false;
    const cost = lines.reduce((sum, line) => sum + line.length + 1, 0);
    const { headLimit } = this.spec;
    if (headLimit !== undefined && this.shown >= headLimit) this.full = 'head';
    else if (this.shown > 0 && this.#chars + cost > this.maxChars) this.full = 'output';
    if (this.full) {
      this.next = index;
      return false;
    }
    this.#lines.push(...lines);
    this.#chars += cost;
    this.shown++;
    return true;
  }

  /** A file glob found. */
  file(shown: string): void {
    this.files++;
    this.#offer([shown]);
  }

  /** A file grep found, with its count or lines as the mode has them. */
  hit(shown: string, hit: ScanHit): void {
    this.files++;
    this.matches += hit.count;
    if (this.spec.mode === 'files_with_matches') this.#offer([shown]);
    else if (this.spec.mode === 'count') this.#offer([`${shown}: ${hit.count}`]);
    else this.#content(shown, hit);
  }

  /**
   * Where text is needed that `hit` lacks: the index of its first matched line to fetch, or
   * undefined when it has all the answer will take.
   */
  missing(hit: ScanHit): number | undefined {
    if (this.spec.mode !== 'content' || !this.taking) return undefined;
    const first = Math.max(0, this.spec.offset - this.seen);
    if (first >= hit.count) return undefined;
    return first < (hit.skipped ?? 0) || hit.cut ? first : undefined;
  }

  #content(shown: string, hit: ScanHit): void {
    const lines = hit.lines ?? [];
    const matched = lines.filter((line) => line[2]).map((line) => line[0]);
    this.seen += hit.skipped ?? 0;
    let k = 0;
    for (let j = 0; j < lines.length;) {
      // An entry: the context before its match (nearer it than the last match's after-context),
      // the match, and the context after it up to the next match's share.
      const at = lines.findIndex((line, index) => index >= j && line[2]);
      if (at === -1) break;
      const next = matched[k + 1] ?? Infinity;
      let end = at + 1;
      while (end < lines.length && !lines[end]![2] && next - lines[end]![0] > this.spec.before)
        end++;
      if (!this.#offer(this.#render(shown, lines.slice(j, end)))) {
        if (this.full) break;
      }
      k++;
      j = end;
    }
    // Matched lines counted without text (the chunk's budget) are still entries met.
    const taken = lines.filter((line) => line[2]).length;
    if (hit.count > (hit.skipped ?? 0) + taken) this.seen += hit.count - (hit.skipped ?? 0) - taken;
  }

  #render(shown: string, lines: ContentLine[]): string[] {
    const out: string[] = [];
    const context = this.spec.before > 0 || this.spec.after > 0;
    const first = lines[0];
    if (
      context &&
      first &&
      this.shown > 0 &&
      (shown !== this.#lastFile || first[0] > this.#lastLine + 1)
    )
      out.push('--');
    for (const [n, text, matched] of lines) {
      const mark = matched ? ':' : '-';
      out.push(
        this.spec.lineNumbers ? `${shown}${mark}${n}${mark} ${text}` : `${shown}${mark} ${text}`,
      );
    }
    const last = lines.at(-1);
    if (last) {
      this.#lastFile = shown;
      this.#lastLine = last[0];
    }
    return out;
  }

  /** The text lines taken. */
  get lines(): readonly string[] {
    return this.#lines;
  }
}

const count = (n: number): string => n.toLocaleString('en-US');

/** The first line of an incomplete answer: what stopped it, how far it got, how to go on. */
export const incompleteLine = (
  incomplete: Incomplete,
  seconds: number,
  maxChars: number,
): string => {
  const { searched, of } = incomplete;
  const far =
    of === null
      ? `after ${count(searched)} files (the listing had not finished)`
      : `after ${count(searched)} of ${count(of)} files`;
  if (incomplete.reason === 'output')
    return (
      `[incomplete: the output budget (${count(maxChars)} characters, tools.output.maxChars) ` +
      `is full ${far}; continue with offset: ${incomplete.offset}]`
    );
  const paths = incomplete.paths ?? [];
  const first = paths.slice(0, 5).map((p) => JSON.stringify(p));
  const rest = paths.length > 5 ? ` and ${paths.length - 5} more` : '';
  return (
    `[incomplete: the time budget (${seconds} s, tools.searchLimits.timeout) ran out ${far}; ` +
    (paths.length
      ? `not searched yet: ${first.join(', ')}${rest}; continue with path: ${first[0]}]`
      : 'search a narrower path]')
  );
};

/** Notes on what was not searched, one line each. */
export const skipNotes = (skips: ScanSkips, slow: string[], unreadable: string[]): string[] => {
  const notes: string[] = [];
  if (skips.binary > 0) notes.push(`(${skips.binary} binary files were not searched)`);
  if (skips.longLines > 0)
    notes.push('(lines longer than 4 MiB were searched in their first 4 MiB only)');
  if (slow.length > 0)
    notes.push(
      `(the pattern ran too long on ${slow.length} file(s) and they were skipped: ` +
        `${slow.slice(0, 3).join(', ')}; it may backtrack without end — simplify it)`,
    );
  if (unreadable.length > 0)
    notes.push(
      `(${unreadable.length} directories could not be read: ${unreadable.slice(0, 3).join(', ')})`,
    );
  return notes;
};
