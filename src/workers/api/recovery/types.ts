import type { ToolCallFamily, ToolSpec } from '../../protocol/api.ts';

// Text tool-call recovery: the shapes every family module shares. A family names the openers its
// call syntax starts with and reads what follows one, fed in chunks as the stream brings them;
// the driver (driver.ts) finds the openers, holds the text back while a reader reads, and turns
// what it read into calls, reasoning or text again.

/** A call as a family read it, before the driver checks it against the offered tools. */
export type RawCall =
  | { name: string; args: unknown }
  /** Only the `TOOL_CALL:` protocol reports a call it could not read (the model was taught it). */
  | { name: string; raw: string; error: string };

/**
 * What a reader says after a chunk. `rest` is what it was fed past the end of its syntax: the
 * driver reads it again as text.
 */
export type Step =
  /** Still inside the syntax (or cannot tell yet): hold everything back. */
  | { kind: 'more' }
  /** Not this family's syntax after all: the driver gives everything back as text. */
  | { kind: 'none' }
  /** `ambiguous` overrides the family's own (one opener of a family may be certain, another not). */
  | { kind: 'calls'; calls: RawCall[]; rest: string; ambiguous?: boolean }
  /** A header that is neither a call nor text (harmony's `<|channel|>final<|message|>`). */
  | { kind: 'skip'; rest: string }
  /** A header opening reasoning, which ends at one of `close` (harmony's analysis channel). */
  | { kind: 'reasoning'; close: readonly string[]; rest: string };

/** Reads one call region, after its opener. */
export interface Reader {
  feed(chunk: string): Step;
  /** The stream ended: decide now (`more` is taken as `none`). */
  finish(): Step;
}

/** What a reader may know about the request. */
export interface ReadContext {
  /** The tools offered, by name (their schemas type the values of XML-style families). */
  tools: ReadonlyMap<string, ToolSpec>;
  /** Whether the model was taught the `TOOL_CALL:` protocol for this request. */
  protocol: 'native' | 'text';
  /**
   * The calls in `text` when it holds nothing else, read by every family but `except` (a fenced
   * block's body), with the families that read them.
   */
  parseCalls(
    text: string,
    except: ToolCallFamily,
  ): { calls: RawCall[]; families: ToolCallFamily[] } | undefined;
}

/**
 * How an opener is recognised at `i` in `text`: its length when it is there, 0 when the text ends
 * before it can tell (hold back), -1 when it is not.
 */
export type OpenerMatch = (text: string, i: number, context: ReadContext) => number;

/** Where an opener counts. */
export type Position =
  /** Anywhere outside code (special tokens nobody writes in prose). */
  | 'anywhere'
  /** At the start of a line, after spaces at most (bare JSON, fences, `>>>`). */
  | 'line';

interface Opener {
  /** A literal, or a matcher; a literal's first character also indexes it. */
  text: string | OpenerMatch;
  /** The characters a matcher's opener can start with (for a literal: its first). */
  first?: string;
  at?: Position;
}

export interface Family {
  id: ToolCallFamily;
  /** The models that write it, for docs and `niffler models`. */
  models: string;
  openers: readonly Opener[];
  /**
   * A syntax prose also uses (bare JSON, a fenced block, a Python call): its calls count only when
   * nothing but further calls follows them in the message.
   */
  ambiguous?: boolean;
  /** Characters allowed between two calls besides white space (Llama's `;`). */
  separators?: string;
  start(opener: string, context: ReadContext): Reader;
}
