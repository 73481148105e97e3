import type { ContentLine } from '../../protocol/search.ts';

// The lines grep shows of one file: matched lines and, around them, context lines, gathered window
// by window (a window is a run of whole lines of the file). Text is kept while the chunk's budget
// lasts; past it, or before the chunk's `textFrom`, matched lines are only counted.

/** The chunk's share: text kept so far, and matched lines met so far. */
export interface TextBudget {
  chars: number;
  max: number;
  matched: number;
  /** Matched lines of the chunk before this one get no text. */
  from: number;
  maxLineChars: number;
}

/** A line as shown: a carriage return dropped, cut to `max` characters. */
const showLine = (text: string, max: number): string => {
  const line = text.endsWith('\r') ? text.slice(0, -1) : text;
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

/** What is gathered for one file. */
export class FileLines {
  count = 0;
  lines: ContentLine[] = [];
  /** Matched lines before `lines` began, shown without text. */
  skipped = 0;
  cut = false;
  #last = 0;
  #afterUntil = 0;
  #tail: string[] = [];
  #tailEnd = 0;

  constructor(
    private readonly budget: TextBudget,
    private readonly before: number,
    private readonly after: number,
  ) {}

  /** Whether the next matched line gets text; counts it either way. */
  #keeps(): boolean {
    const b = this.budget;
    const index = b.matched++;
    this.count++;
    if (this.cut) return false;
    if (index < b.from) {
      if (this.lines.length === 0) this.skipped++;
      else this.cut = true;
      return false;
    }
    if (b.chars >= b.max) {
      this.cut = true;
      return false;
    }
    return true;
  }

  #push(n: number, text: string, matched: boolean): void {
    const shown = showLine(text, this.budget.maxLineChars);
    this.budget.chars += shown.length + 16;
    this.lines.push([n, shown, matched]);
    this.#last = n;
  }

  /** A matched line `n` with its text; `lineAt` gives the text of a line of the window. */
  match(n: number, text: string, lineAt: (n: number) => string | undefined): void {
    if (!this.#keeps()) return;
    const { before } = this;
    const gapEnd = Math.min(this.#afterUntil, n - 1);
    for (let m = this.#last + 1; m <= gapEnd; m++) this.#context(m, lineAt);
    for (let m = Math.max(this.#last + 1, n - before); m < n; m++) this.#context(m, lineAt);
    this.#push(n, text, true);
    this.#afterUntil = n + this.after;
  }

  #context(m: number, lineAt: (n: number) => string | undefined): void {
    const text = lineAt(m) ?? this.#fromTail(m);
    if (text !== undefined) this.#push(m, text, false);
  }

  #fromTail(m: number): string | undefined {
    const index = this.#tail.length - 1 - (this.#tailEnd - m);
    return index >= 0 ? this.#tail[index] : undefined;
  }

  /**
   * The window that ended at line `lastLine` is done: its after-context is shown, and its last
   * lines are kept for the next window's before-context.
   */
  endWindow(lastLine: number, lineAt: (n: number) => string | undefined): void {
    if (!this.cut)
      for (let m = this.#last + 1; m <= Math.min(this.#afterUntil, lastLine); m++)
        this.#context(m, lineAt);
    if (this.before > 0) {
      const tail: string[] = [];
      for (let m = Math.max(lastLine - this.before + 1, 1); m <= lastLine; m++) {
        const text = lineAt(m) ?? this.#fromTail(m);
        if (text !== undefined) tail.push(text);
      }
      this.#tail = tail;
      this.#tailEnd = lastLine;
    }
  }

  /** Whether context lines are wanted (then windows are split into lines). */
  get wantsContext(): boolean {
    return this.before > 0 || this.after > 0;
  }
}
