import type { LlmEvent, ToolCall, ToolCallFamily, ToolSpec } from '../../protocol/api.ts';
import { argumentsProblem } from '../messages.ts';
import { endsTurn } from './controls.ts';
import { handlerTable, type Handler, type HandlerTable } from './handlers.ts';
import { MAX_REGION_CHARS, Pieces } from './scan.ts';
import type { Family, RawCall, ReadContext, Reader, Step } from './types.ts';

// The driver: text streams through at once; from a possible opener on it is held back; a family
// that reads a call there turns it into calls, and a false start goes out as text, unchanged.
// Modes: text (looking for openers), fence (inside a code block: nothing is a call), reasoning
// (a thinking block), call (readers reading a region), after (calls read: white space, more calls
// or the end may follow), stopped (what follows the calls is not the answer).

type Mode = 'text' | 'fence' | 'reasoning' | 'call' | 'after' | 'stopped';

/** A call that passed the checks, its id given when it goes out. */
type Checked =
  | { kind: 'call'; call: Omit<ToolCall, 'id'> }
  | { kind: 'invalid'; name: string; raw: string; message: string };

interface Candidate {
  family: Family;
  reader: Reader;
  step: Step;
  /** What was fed after the reader decided: the text after its syntax. */
  extra: Pieces;
  checked?: Checked[];
}

interface Region {
  raw: Pieces;
  candidates: Candidate[];
  from: 'text' | 'after';
}

type Found =
  | 'partial'
  | { handler: Handler; length: number }
  | { families: { family: Family; length: number }[] };

export interface DriverOptions {
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
  #out: LlmEvent[] = [];
  #prev = '';
  #lineStart = true;
  #messageStart = true;
  /** At the start, and after a thinking block: the answer's leading white space goes. */
  #trimLead: boolean;
  /** The text at the front of `#buf` is a region given back: its opener is no call there. */
  #released = false;
  #closers: readonly string[] = [];
  #region: Region | undefined;
  #lock: Family | undefined;
  #pending: { checked: Checked[]; raw: string }[] = [];
  #afterRaw = new Pieces();
  #calls = 0;
  #spoke = false;
  /** The families of the calls that went out, in order (a fenced block's body asks). */
  readonly families: ToolCallFamily[] = [];
  readonly emitted: RawCall[] = [];

  constructor(options: DriverOptions) {
    this.#options = options;
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
    return this.#calls;
  }
  /** Whether anything but white space went out as text. */
  get spoke(): boolean {
    return this.#spoke;
  }

  feed(chunk: string): LlmEvent[] {
    if (this.#mode === 'stopped' || !chunk) return [];
    this.#buf += chunk;
    while (this.#step(false));
    return this.#drain();
  }

  /** The stream ended; `commit`: whether calls still waiting for the message's end count. */
  finish(commit = true): LlmEvent[] {
    while (this.#step(true));
    if (commit) this.#commitPending();
    else this.#releasePending();
    return this.#drain();
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
    return this.#drain();
  }

  #drain(): LlmEvent[] {
    const out = this.#out;
    this.#out = [];
    return out;
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
    const kind = this.#options.channel === 'reasoning' ? 'reasoning' : type;
    if (kind === 'text' && /\S/.test(text)) this.#spoke = true;
    const last = this.#out.at(-1);
    if (last?.type === kind) last.text += text;
    else this.#out.push({ type: kind, text });
    this.#prev = text[text.length - 1]!;
  }

  #emitCalls(checked: Checked[], family: Family): void {
    for (const c of checked) {
      const id = this.#options.newId();
      this.#calls++;
      this.families.push(family.id);
      if (c.kind === 'call') {
        this.#out.push({ type: 'tool-call', call: { id, ...c.call } });
        this.emitted.push({ name: c.call.name, args: c.call.args });
      } else {
        const { name, raw, message } = c;
        this.#out.push({ type: 'tool-call-invalid', id, name, raw, message });
        this.emitted.push({ name, raw, error: message });
      }
    }
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
    const buf = this.#buf;
    let lineStart = this.#lineStart;
    for (let i = 0; i < buf.length; i++) {
      if (lineStart && buf[i] === '`') {
        const head = buf.slice(i, i + 3);
        if (head === '```') {
          this.#emit('text', buf.slice(0, i + 3));
          this.#buf = buf.slice(i + 3);
          this.#mode = 'text';
          this.#lineStart = false;
          return true;
        }
        if (!final && i + head.length === buf.length && '```'.startsWith(head)) {
          this.#emit('text', buf.slice(0, i));
          this.#buf = buf.slice(i);
          this.#lineStart = true;
          return false;
        }
      }
      const c = buf[i]!;
      if (c === '\n') lineStart = true;
      else if (c !== ' ' && c !== '\t') lineStart = false;
    }
    this.#emit('text', buf);
    this.#buf = '';
    this.#lineStart = lineStart;
    return false;
  }

  /** Reasoning up to its closing tag; a tag the text ends inside of is held back. */
  #reasoning(final: boolean): boolean {
    const buf = this.#buf;
    let at = -1;
    let closer = '';
    for (const c of this.#closers) {
      const j = buf.indexOf(c);
      if (j >= 0 && (at < 0 || j < at)) [at, closer] = [j, c];
    }
    if (at >= 0) {
      this.#emit('reasoning', buf.slice(0, at));
      this.#buf = buf.slice(at + closer.length);
      this.#mode = 'text';
      this.#trimLead = this.#messageStart;
      this.#prev = '';
      return true;
    }
    let keep = 0;
    if (!final)
      for (const c of this.#closers)
        for (let k = Math.min(c.length - 1, buf.length); k > keep; k--)
          if (c.startsWith(buf.slice(buf.length - k))) keep = k;
    this.#emit('reasoning', buf.slice(0, buf.length - keep));
    this.#buf = buf.slice(buf.length - keep);
    return false;
  }

  // ---- openers ----

  /** The handlers whose opener is at `i`: a family's (first), or another kind; or `partial`. */
  #match(
    buf: string,
    i: number,
    final: boolean,
    position: { lineStart: boolean; messageStart: boolean },
    noFamilies: boolean,
  ): Found | undefined {
    const families: { family: Family; length: number }[] = [];
    let partial = false;
    let other: { handler: Handler; length: number } | undefined;
    for (const handler of this.#table.byFirst.get(buf[i]!) ?? []) {
      if (handler.kind === 'family') {
        if (noFamilies || (this.#lock && !handler.families.includes(this.#lock))) continue;
        if (handler.at === 'line' && !position.lineStart) continue;
      }
      if (handler.kind === 'think' && !position.messageStart) continue;
      if (handler.kind === 'fence' && !position.lineStart) continue;
      const length = handler.match(buf, i, this.#context);
      if (length === 0 && !final) partial = true;
      if (length <= 0) continue;
      if (handler.kind !== 'family') other ??= { handler, length };
      else
        for (const family of handler.families)
          if (!this.#lock || family === this.#lock) families.push({ family, length });
    }
    if (partial) return 'partial';
    if (families.length > 0) return { families };
    return other;
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
    from: Region['from'],
  ): void {
    const region: Region = { raw: new Pieces(), candidates: [], from };
    region.raw.push(text);
    for (const { family, length } of families) {
      const reader = family.start(text.slice(0, length), this.#context);
      const candidate: Candidate = { family, reader, step: { kind: 'more' }, extra: new Pieces() };
      this.#decide(candidate, reader.feed(text.slice(length)));
      region.candidates.push(candidate);
    }
    this.#region = region;
    this.#mode = 'call';
    this.#buf = '';
  }

  /** Records a reader's step; calls that fail the checks make it no call. */
  #decide(candidate: Candidate, step: Step): void {
    candidate.step = step;
    if (step.kind !== 'calls') return;
    const checked = this.#check(step.calls, candidate.family);
    if (checked) candidate.checked = checked;
    else candidate.step = { kind: 'none' };
  }

  /** Feeds the region; once the first family in order decides, takes its reading. */
  #call(final: boolean): boolean {
    const region = this.#region!;
    const chunk = this.#buf;
    this.#buf = '';
    region.raw.push(chunk);
    const tooLong = region.raw.length > MAX_REGION_CHARS + 4096;
    for (const c of region.candidates) {
      if (c.step.kind !== 'more') {
        if (c.step.kind !== 'none') c.extra.push(chunk);
        continue;
      }
      if (chunk) this.#decide(c, c.reader.feed(chunk));
      if (c.step.kind === 'more' && final) this.#decide(c, c.reader.finish());
      if (c.step.kind === 'more' && (final || tooLong)) c.step = { kind: 'none' };
    }
    for (const c of region.candidates) {
      if (c.step.kind === 'none') continue;
      if (c.step.kind === 'more') return false;
      this.#accept(c, region);
      return true;
    }
    this.#release(region);
    return true;
  }

  #accept(c: Candidate, region: Region): void {
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
      this.#emitCalls(c.checked!, c.family);
    }
    this.#afterRaw = new Pieces();
    this.#mode = 'after';
    this.#buf = rest;
  }

  /** No family read a call: the region is text again, its opener no call where it stands. */
  #release(region: Region): void {
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
        if (endsTurn(token) && this.#calls + this.#pending.length > 0) return this.#stop();
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
    if (this.#calls > 0) {
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
    for (const p of this.#pending) this.#emitCalls(p.checked, this.#lock!);
    this.#pending = [];
  }

  #releasePending(): void {
    if (this.#pending.length === 0) return;
    this.#afterText(false);
    while (this.#step(true));
  }

  // ---- checks ----

  /**
   * The checks a recovered call passes: an offered tool, arguments as a native call's. Under the
   * text protocol, a `TOOL_CALL:` that fails them is reported to the model instead.
   */
  #check(calls: RawCall[], family: Family): Checked[] | undefined {
    const taught = family.id === 'niffler' && this.#options.protocol === 'text';
    const checked: Checked[] = [];
    for (const raw of calls) {
      const problem =
        'error' in raw
          ? raw.error
          : !this.#tools.has(raw.name)
            ? `no tool named "${raw.name}" is offered; the tools are: ${[...this.#tools.keys()].join(', ') || 'none'}`
            : argumentsProblem(raw.name, raw.args);
      if (problem === undefined && 'args' in raw)
        checked.push({
          kind: 'call',
          call: { name: raw.name, args: raw.args as ToolCall['args'] },
        });
      else if (taught) {
        const text = 'raw' in raw ? raw.raw : JSON.stringify(raw.args);
        checked.push({ kind: 'invalid', name: raw.name, raw: text, message: problem ?? '' });
      } else return undefined;
    }
    return checked;
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
    return { calls: inner.emitted, families: inner.families };
  }
}
