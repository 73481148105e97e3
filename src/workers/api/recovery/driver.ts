import type { LlmEvent, ToolCallFamily, ToolSpec } from '../../protocol/api.ts';
import { scanFence, scanReasoning } from './blocks.ts';
import { checkCalls, type Checked } from './checks.ts';
import { endsTurn } from './controls.ts';
import {
  handlerTable,
  openersAt,
  type Found,
  type HandlerTable,
  type OpenerPosition,
} from './handlers.ts';
import { DriverOutput } from './output.ts';
import { CallRegion, type Candidate } from './region.ts';
import { Pieces } from './scan.ts';
import type { Family, RawCall, ReadContext, Step } from './types.ts';

// The driver: text streams through at once; from a possible opener on it is held back; a family
// that reads a call there turns it into calls, and a false start goes out as text, unchanged.
// Modes: text (looking for openers), fence (inside a code block: nothing is a call), reasoning
// (a thinking block), call (readers reading a region), after (calls read: white space, more calls
// or the end may follow), stopped (what follows the calls is not the answer).

type Mode = 'text' | 'fence' | 'reasoning' | 'call' | 'after' | 'stopped';

interface DriverOptions {
  families: readonly Family[];
  tools: readonly ToolSpec[];
  protocol: 'native' | 'text';
  newId: () => string;
  /** `reasoning`: a reasoning channel; what it lets through is reasoning, its calls all wait. */
  channel: 'content' | 'reasoning';
}

const isSpace = (c: string): boolean => c === ' ' || c === '\n' || c === '\t' || c === '\r';

export class Driver {
  readonly #families: readonly Family[];
  readonly #table: HandlerTable;
  readonly #tools: Map<string, ToolSpec>;
  readonly #context: ReadContext;
  readonly #options: DriverOptions;
  #mode: Mode = 'text';
  #buf = '';
  #prev = '';
  #lineStart = true;
  #messageStart = true;
  /** At the start, and after a thinking block: the answer's leading white space goes. */
  #trimLead: boolean;
  /** The text at the front of `#buf` is a region given back: its opener is no call there. */
  #released = false;
  #closers: readonly string[] = [];
  #region: CallRegion | undefined;
  #lock: Family | undefined;
  #pending: { checked: Checked[]; raw: string }[] = [];
  #afterRaw = new Pieces();
  readonly #output: DriverOutput;

  constructor(options: DriverOptions) {
    this.#options = options;
    this.#output = new DriverOutput(options.channel, options.newId);
    this.#trimLead = options.channel === 'content';
    this.#families = options.families;
    this.#table = handlerTable(options.families, options.channel === 'content');
    this.#tools = new Map(options.tools.map((t) => [t.name, t]));
    this.#context = {
      tools: this.#tools,
      protocol: options.protocol,
      parseCalls: (text, except) => this.#parseCalls(text, except),
    };
  }

  get stopped(): boolean {
    return this.#mode === 'stopped';
  }
  get calls(): number {
    return this.#output.calls;
  }
  /** Whether anything but white space went out as text. */
  get spoke(): boolean {
    return this.#output.spoke;
  }

  feed(chunk: string): LlmEvent[] {
    if (this.#mode === 'stopped' || !chunk) return [];
    this.#buf += chunk;
    while (this.#step(false));
    return this.#output.take();
  }

  /** The stream ended; `commit`: whether calls still waiting for the message's end count. */
  finish(commit = true): LlmEvent[] {
    while (this.#step(true));
    if (commit) this.#commitPending();
    else this.#releasePending();
    return this.#output.take();
  }

  /**
   * The stream failed: the plain text held back (a possible opener at its end) goes out; a call
   * region or calls waiting for the message's end do not.
   */
  abandon(): LlmEvent[] {
    if (this.#mode === 'text' || this.#mode === 'fence') this.#emit('text', this.#buf);
    if (this.#mode === 'reasoning') this.#emit('reasoning', this.#buf);
    this.#buf = '';
    this.#mode = 'stopped';
    return this.#output.take();
  }

  #step(final: boolean): boolean {
    switch (this.#mode) {
      case 'text':
        return this.#text(final);
      case 'fence':
        return this.#fence(final);
      case 'reasoning':
        return this.#reasoning(final);
      case 'call':
        return this.#call(final);
      case 'after':
        return this.#after(final);
      case 'stopped':
        this.#buf = '';
        return false;
    }
  }

  // ---- output ----

  #emit(type: 'text' | 'reasoning', text: string): void {
    if (!text) return;
    this.#output.text(type, text);
    this.#prev = text[text.length - 1]!;
  }

  // ---- text, fences, reasoning ----

  /** Plain text up to an opener, or up to what may still become one at the end. */
  #text(final: boolean): boolean {
    const buf = this.#buf;
    let lineStart = this.#lineStart;
    let messageStart = this.#messageStart;
    let from = 0;
    if (this.#trimLead) {
      while (from < buf.length && isSpace(buf[from]!)) from++;
      if (from < buf.length) this.#trimLead = false;
    }
    for (let i = from; i < buf.length; i++) {
      const c = buf[i]!;
      const code = c.charCodeAt(0);
      if (code < 128 && this.#table.first[code] && (i > 0 ? buf[i - 1] : this.#prev) !== '`') {
        const position = { lineStart, messageStart: messageStart && lineStart };
        const found = this.#match(buf, i, final, position, i === 0 && this.#released);
        if (found) {
          this.#lineStart = lineStart;
          this.#messageStart = messageStart;
          this.#emit('text', buf.slice(from, i));
          this.#released = false;
          if (found === 'partial') {
            this.#buf = buf.slice(i);
            return false;
          }
          this.#apply(found, buf, i);
          return true;
        }
      }
      if (c === '\n') lineStart = true;
      else if (!isSpace(c)) lineStart = messageStart = false;
    }
    this.#lineStart = lineStart;
    this.#messageStart = messageStart;
    this.#emit('text', buf.slice(from));
    this.#buf = '';
    this.#released = false;
    return false;
  }

  /** Inside a code block: text, up to the fence that closes it. */
  #fence(final: boolean): boolean {
    const scan = scanFence(this.#buf, this.#lineStart, final);
    this.#emit('text', scan.text);
    this.#buf = scan.rest;
    this.#lineStart = scan.lineStart;
    if (scan.closed) this.#mode = 'text';
    return scan.closed;
  }

  /** Reasoning up to its closing tag; a tag the text ends inside of is held back. */
  #reasoning(final: boolean): boolean {
    const scan = scanReasoning(this.#buf, this.#closers, final);
    this.#emit('reasoning', scan.text);
    this.#buf = scan.rest;
    if (!scan.closed) return false;
    this.#mode = 'text';
    this.#trimLead = this.#messageStart;
    this.#prev = '';
    return true;
  }

  // ---- openers ----

  /** The handlers whose opener is at `i`: a family's (first), or another kind; or `partial`. */
  #match(
    buf: string,
    i: number,
    final: boolean,
    position: OpenerPosition,
    noFamilies: boolean,
  ): Found | undefined {
    const at = { buf, i, final, position, noFamilies };
    return openersAt(this.#table, this.#context, this.#lock, at);
  }

  #apply(found: Exclude<Found, 'partial'>, buf: string, i: number): void {
    if ('families' in found) return this.#startRegion(buf.slice(i), found.families, 'text');
    const { handler, length } = found;
    const token = buf.slice(i, i + length);
    this.#buf = buf.slice(i + length);
    this.#prev = '';
    switch (handler.kind) {
      case 'think':
        this.#mode = 'reasoning';
        this.#closers = handler.close;
        return;
      case 'fence':
        this.#emit('text', token);
        this.#mode = 'fence';
        this.#lineStart = true;
        this.#messageStart = false;
        return;
      case 'control':
        if (token.endsWith('\n')) this.#lineStart = true;
        return;
      case 'family':
        return;
    }
  }

  // ---- call regions ----

  #startRegion(
    text: string,
    families: { family: Family; length: number }[],
    from: CallRegion['from'],
  ): void {
    const check = (calls: RawCall[], family: Family) =>
      checkCalls(calls, family, this.#tools, this.#options.protocol);
    this.#region = new CallRegion(text, families, from, this.#context, check);
    this.#mode = 'call';
    this.#buf = '';
  }

  /** Feeds the region; once the first family in order decides, takes its reading. */
  #call(final: boolean): boolean {
    const region = this.#region!;
    const chunk = this.#buf;
    this.#buf = '';
    const taken = region.feed(chunk, final);
    if (taken === 'more') return false;
    if (taken === 'none') this.#release(region);
    else this.#accept(taken, region);
    return true;
  }

  #accept(c: Candidate, region: CallRegion): void {
    const step = c.step as Exclude<Step, { kind: 'more' | 'none' }>;
    const rest = step.rest + c.extra.text();
    const raw = region.raw.text();
    this.#region = undefined;
    if (step.kind !== 'calls') {
      if (region.from === 'after') return this.#release(region);
      this.#buf = rest;
      this.#prev = '';
      this.#mode = step.kind === 'reasoning' ? 'reasoning' : 'text';
      this.#closers = step.kind === 'reasoning' ? step.close : [];
      this.#lineStart = true;
      return;
    }
    this.#lock ??= c.family;
    const ambiguous =
      this.#options.channel === 'reasoning' || (step.ambiguous ?? c.family.ambiguous ?? false);
    if (ambiguous)
      this.#pending.push({ checked: c.checked!, raw: raw.slice(0, raw.length - rest.length) });
    else {
      this.#commitPending();
      this.#output.callsOf(c.checked!, c.family);
    }
    this.#afterRaw = new Pieces();
    this.#mode = 'after';
    this.#buf = rest;
  }

  /** No family read a call: the region is text again, its opener no call where it stands. */
  #release(region: CallRegion): void {
    this.#region = undefined;
    this.#buf = region.raw.text();
    if (region.from === 'after') return this.#afterText(true);
    this.#mode = 'text';
    this.#released = true;
  }

  // ---- after calls ----

  /** After calls: white space, control tokens and further calls; anything else decides. */
  #after(final: boolean): boolean {
    const buf = this.#buf;
    const separators = this.#lock?.separators ?? '';
    const position = { lineStart: true, messageStart: false };
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i]!;
      if (isSpace(c) || separators.includes(c)) continue;
      const found = this.#match(buf, i, final, position, false);
      this.#afterRaw.push(buf.slice(0, i));
      this.#buf = buf.slice(i);
      if (found === 'partial') return false;
      if (found && 'families' in found) {
        this.#startRegion(this.#buf, found.families, 'after');
        return true;
      }
      if (found?.handler.kind === 'control') {
        const token = buf.slice(i, i + found.length);
        if (endsTurn(token) && this.#output.calls + this.#pending.length > 0) return this.#stop();
        this.#afterRaw.push(token);
        this.#buf = buf.slice(i + found.length);
        return true;
      }
      this.#afterText(false);
      return true;
    }
    this.#afterRaw.push(buf);
    this.#buf = '';
    return false;
  }

  /**
   * Text after calls. After a certain call it is not the answer (often an invented result): the
   * stream stops. After calls that needed the message to end there, they were prose: all of it
   * goes out as text.
   */
  #afterText(released: boolean): void {
    if (this.#output.calls > 0) {
      this.#stop();
      return;
    }
    const prose = this.#pending.map((p) => p.raw).join('') + this.#afterRaw.text();
    this.#pending = [];
    this.#afterRaw = new Pieces();
    this.#lock = undefined;
    this.#emit('text', prose);
    this.#messageStart = false;
    this.#lineStart = prose.endsWith('\n');
    this.#mode = 'text';
    this.#released = released;
  }

  #stop(): false {
    this.#commitPending();
    this.#mode = 'stopped';
    this.#buf = '';
    return false;
  }

  #commitPending(): void {
    for (const p of this.#pending) this.#output.callsOf(p.checked, this.#lock!);
    this.#pending = [];
  }

  #releasePending(): void {
    if (this.#pending.length === 0) return;
    this.#afterText(false);
    while (this.#step(true));
  }

  /** A fenced block's body read alone: only calls, or undefined. */
  #parseCalls(text: string, except: ToolCallFamily) {
    const inner = new Driver({
      ...this.#options,
      families: this.#families.filter((f) => f.id !== except),
      channel: 'content',
      newId: () => '',
    });
    inner.feed(text);
    inner.finish();
    if (inner.spoke || inner.stopped || inner.calls === 0) return undefined;
    return { calls: inner.#output.emitted, families: inner.#output.families };
  }
}
