import { BalancedScan, MAX_REGION_CHARS, UntilScan } from './scan.ts';
import type { RawCall, Reader, Step } from './types.ts';

// The readers most families are made of: a region that ends at a closing tag and is parsed whole,
// and a balanced value (a JSON object or array, a Python list) parsed once it closes.

const NONE: Step = { kind: 'none' };
const MORE: Step = { kind: 'more' };

/** Calls, or `none` when the parse found none. */
const callsOrNone = (calls: RawCall[] | undefined, rest: string): Step =>
  calls && calls.length > 0 ? { kind: 'calls', calls, rest } : NONE;

/**
 * A region up to the first of `closers`, parsed whole by `parse`. With `unclosed`, a stream that
 * ends inside the region is parsed as it stands (servers that stop at the closing tag cut it
 * off); else it is text.
 */
export const closedBy = (
  closers: readonly string[],
  parse: (body: string) => RawCall[] | undefined,
  options: { unclosed?: boolean } = {},
): Reader => {
  const scan = new UntilScan(closers);
  return {
    feed(chunk) {
      const found = scan.push(chunk);
      if (found) return callsOrNone(parse(found.body), found.rest);
      return scan.length > MAX_REGION_CHARS ? NONE : MORE;
    },
    finish: () => (options.unclosed ? callsOrNone(parse(scan.all()), '') : NONE),
  };
};

/**
 * One balanced value starting with one of `starts` (after white space), parsed by `parse` once it
 * closes; `prefix` is given to the scanner first (an opener that ends with the value's bracket).
 */
export const balanced = (
  starts: string,
  parse: (value: string) => RawCall[] | undefined,
  options: { quotes?: string; prefix?: string } = {},
): Reader => {
  const scan = new BalancedScan(starts, options.quotes ?? '"');
  if (options.prefix) scan.push(options.prefix);
  return {
    feed(chunk) {
      const found = scan.push(chunk);
      if (found === 'bad') return NONE;
      if (found) return callsOrNone(parse(found.value), found.rest);
      return scan.length > MAX_REGION_CHARS ? NONE : MORE;
    },
    finish: () => NONE,
  };
};

/**
 * `reader`, then its closing tag: white space and `closer` after the calls are part of them. A
 * call whose closing tag never comes (the server stopped at it, or the model went on) still counts.
 */
export const thenClosed = (reader: Reader, closer: string): Reader => {
  let done: Extract<Step, { kind: 'calls' }> | undefined;
  const close = (rest: string): Step => {
    const after = rest.trimStart();
    if (after.startsWith(closer)) return { ...done!, rest: after.slice(closer.length) };
    if (closer.startsWith(after)) return MORE;
    return { ...done!, rest };
  };
  let pending = '';
  return {
    feed(chunk) {
      if (done) return close((pending += chunk));
      const step = reader.feed(chunk);
      if (step.kind !== 'calls') return step;
      done = step;
      return close((pending = step.rest));
    },
    finish: () => (done ? { ...done, rest: pending } : reader.finish()),
  };
};

/**
 * A header read up to `end` (at most `max` characters), then the reader `next` makes of it for
 * what follows; `next` returning a step instead decides at once.
 */
export const headed = (end: string, next: (header: string) => Reader | Step, max = 300): Reader => {
  const scan = new UntilScan([end]);
  let body: Reader | undefined;
  return {
    feed(chunk) {
      if (body) return body.feed(chunk);
      const found = scan.push(chunk);
      if (!found) return scan.length > max ? NONE : MORE;
      const made = next(found.body);
      if ('kind' in made) return made.kind === 'more' ? NONE : withRest(made, found.rest);
      body = made;
      return found.rest ? body.feed(found.rest) : MORE;
    },
    finish: () => body?.finish() ?? NONE,
  };
};

/** A step decided on a header, with the text after the header as its rest. */
const withRest = (step: Step, rest: string): Step =>
  step.kind === 'none' || step.kind === 'more' ? step : { ...step, rest: step.rest + rest };

/**
 * `reader`, once the region's start (after white space) fits `fits`: true, false (no call: the
 * region goes back at once instead of when it closes), or undefined while it cannot tell yet.
 */
export const startingWith = (
  fits: (start: string) => boolean | undefined,
  reader: Reader,
): Reader => {
  let held = '';
  let passing = false;
  return {
    feed(chunk) {
      if (passing) return reader.feed(chunk);
      held += chunk;
      const verdict = fits(held.trimStart());
      if (verdict === undefined) return held.length > 256 ? NONE : MORE;
      if (!verdict) return NONE;
      passing = true;
      return reader.feed(held);
    },
    finish: () => (passing ? reader.finish() : NONE),
  };
};

/** A reader whose calls need the message to end after them (`ambiguous`), or not. */
export const marked = (reader: Reader, ambiguous: boolean): Reader => {
  const mark = (step: Step): Step => (step.kind === 'calls' ? { ...step, ambiguous } : step);
  return { feed: (chunk) => mark(reader.feed(chunk)), finish: () => mark(reader.finish()) };
};

export { NONE, MORE };
