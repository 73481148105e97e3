// Incremental scanners the family readers share. Each keeps its place between chunks, so a long
// call streamed in small chunks is looked at once, and never rebuilt into one growing string
// (each look at such a string copies all of it).

/** The most a call region may hold; past it the region is given back as text. */
export const MAX_REGION_CHARS = 1_000_000;

/** Text gathered in pieces, joined once. */
export class Pieces {
  #parts: string[] = [];
  length = 0;
  push(text: string): void {
    if (!text) return;
    this.#parts.push(text);
    this.length += text.length;
  }
  text(): string {
    const joined = this.#parts.join('');
    this.#parts = joined ? [joined] : [];
    return joined;
  }
}

type Found = { body: string; closer: string; rest: string };

/**
 * Reads up to the first of `closers`. `push` returns what came before it and after it once it
 * arrives, else undefined.
 */
export class UntilScan {
  readonly #closers: readonly string[];
  readonly #keep: number;
  readonly #body = new Pieces();
  #tail = '';

  constructor(closers: readonly string[]) {
    this.#closers = closers;
    this.#keep = Math.max(...closers.map((c) => c.length)) - 1;
  }

  get length(): number {
    return this.#body.length + this.#tail.length;
  }

  push(chunk: string): Found | undefined {
    const window = this.#tail + chunk;
    let at = -1;
    let closer = '';
    for (const c of this.#closers) {
      const j = window.indexOf(c);
      if (j >= 0 && (at < 0 || j < at)) [at, closer] = [j, c];
    }
    if (at >= 0) {
      this.#body.push(window.slice(0, at));
      this.#tail = '';
      return { body: this.#body.text(), closer, rest: window.slice(at + closer.length) };
    }
    const keep = Math.min(this.#keep, window.length);
    this.#body.push(window.slice(0, window.length - keep));
    this.#tail = window.slice(window.length - keep);
    return undefined;
  }

  /** Everything pushed so far (for a region the stream left open). */
  all(): string {
    return this.#body.text() + this.#tail;
  }
}

/** The opening bracket a closing one closes (`}` `]` `)`), or 0. */
const opening = (code: number): number =>
  code === 0x7d ? 0x7b : code === 0x5d ? 0x5b : code === 0x29 ? 0x28 : 0;
const isOpen = (code: number): boolean => code === 0x7b || code === 0x5b || code === 0x28;
const BACKSLASH = 0x5c;

/**
 * Reads one balanced value — a JSON object or array, a Python call or list — from its first
 * character that is not white space, which must be one of `starts`. Strings in `quotes` are
 * skipped, backslash escapes included. `push` returns the value's text and what follows it,
 * `bad` for a start or a closing bracket that does not fit, else undefined.
 */
export class BalancedScan {
  readonly #starts: string;
  readonly #quotes: number[];
  readonly #value = new Pieces();
  readonly #stack: number[] = [];
  #started = false;
  /** The quote of the string the scan is in, or 0. */
  #quote = 0;
  #escaped = false;

  constructor(starts = '{', quotes = '"') {
    this.#starts = starts;
    this.#quotes = [...quotes].map((q) => q.charCodeAt(0));
  }

  get length(): number {
    return this.#value.length;
  }

  /** The value's text so far (of one the stream left open). */
  partial(): string {
    return this.#value.text();
  }

  push(chunk: string): { value: string; rest: string } | 'bad' | undefined {
    let i = 0;
    if (!this.#started) {
      i = leadingSpace(chunk);
      if (i === chunk.length) return undefined;
      if (!this.#starts.includes(chunk[i]!)) return 'bad';
      this.#started = true;
    }
    const from = i;
    for (; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.#quote) {
        if (this.#escaped) this.#escaped = false;
        else if (c === BACKSLASH) this.#escaped = true;
        else if (c === this.#quote) this.#quote = 0;
      } else if (this.#quotes.includes(c)) this.#quote = c;
      else if (isOpen(c)) this.#stack.push(c);
      else if (opening(c)) {
        if (this.#stack.pop() !== opening(c)) return 'bad';
        if (this.#stack.length === 0) {
          this.#value.push(chunk.slice(from, i + 1));
          return { value: this.#value.text(), rest: chunk.slice(i + 1) };
        }
      }
    }
    this.#value.push(chunk.slice(from));
    return undefined;
  }
}

/** The prefix of `text` made of white space. */
const leadingSpace = (text: string): number => {
  let i = 0;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
};
