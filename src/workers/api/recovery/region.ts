import type { Checked } from './checks.ts';
import { MAX_REGION_CHARS, Pieces } from './scan.ts';
import type { Family, RawCall, ReadContext, Reader, Step } from './types.ts';

// A call region: from an opener on, the text is held back and read by every family that shares
// the opener, each with its own reader; the first family in order that decides is taken.

/** One family reading the region. */
export interface Candidate {
  family: Family;
  reader: Reader;
  step: Step;
  /** What was fed after the reader decided: the text after its syntax. */
  extra: Pieces;
  checked?: Checked[];
}

/** The checks a family's calls pass (`checkCalls` with the request's tools). */
type Check = (calls: RawCall[], family: Family) => Checked[] | undefined;

export class CallRegion {
  readonly raw = new Pieces();
  readonly candidates: Candidate[] = [];

  constructor(
    text: string,
    families: { family: Family; length: number }[],
    /** Where it began: in text, or after calls. */
    readonly from: 'text' | 'after',
    context: ReadContext,
    private readonly check: Check,
  ) {
    this.raw.push(text);
    for (const { family, length } of families) {
      const reader = family.start(text.slice(0, length), context);
      const candidate: Candidate = { family, reader, step: { kind: 'more' }, extra: new Pieces() };
      this.#decide(candidate, reader.feed(text.slice(length)));
      this.candidates.push(candidate);
    }
  }

  /**
   * Feeds `chunk` to the readers still reading: the candidate taken once the first family in
   * order decides; `more` while it reads on; `none` when no family read a call.
   */
  feed(chunk: string, final: boolean): Candidate | 'more' | 'none' {
    this.raw.push(chunk);
    const tooLong = this.raw.length > MAX_REGION_CHARS + 4096;
    for (const c of this.candidates) {
      if (c.step.kind !== 'more') {
        if (c.step.kind !== 'none') c.extra.push(chunk);
        continue;
      }
      if (chunk) this.#decide(c, c.reader.feed(chunk));
      if (c.step.kind === 'more' && final) this.#decide(c, c.reader.finish());
      if (c.step.kind === 'more' && (final || tooLong)) c.step = { kind: 'none' };
    }
    for (const c of this.candidates) {
      if (c.step.kind === 'none') continue;
      return c.step.kind === 'more' ? 'more' : c;
    }
    return 'none';
  }

  /** Records a reader's step; calls that fail the checks make it no call. */
  #decide(candidate: Candidate, step: Step): void {
    candidate.step = step;
    if (step.kind !== 'calls') return;
    const checked = this.check(step.calls, candidate.family);
    if (checked) candidate.checked = checked;
    else candidate.step = { kind: 'none' };
  }
}
