import { SpillingString } from './spill.ts';

// One JSON value read from chunks as they arrive, for a JSON-RPC message too large to hold several
// times over (ProcessTransport switches to it for a long line). It builds the value as JSON.parse
// would, except that the text of a tool result's content block (`result.content[i].text`) longer
// than `keepChars` goes to a file as it is read: memory holds its start only (see spill.ts).

type Frame =
  | {
      kind: 'object';
      value: Record<string, unknown>;
      key?: string;
      expect: 'key' | ':' | 'value' | ',';
    }
  | { kind: 'array'; value: unknown[]; expect: 'value' | ',' };

const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const SCALAR_END = new Set([0x2c, 0x5d, 0x7d, 0x20, 0x09, 0x0a, 0x0d]); // , ] } and whitespace

const syntax = (what: string) => new SyntaxError(`not JSON: ${what}`);

/** Reads one JSON value from byte chunks; `end()` returns it or throws a SyntaxError. */
export class SpillingParser {
  #stack: Frame[] = [];
  #root: unknown;
  #done = false;
  #string: { isKey: boolean; body: SpillingString; escaped: boolean } | undefined;
  #scalar = '';

  constructor(
    private readonly keepChars: number,
    private readonly openFile: () => string,
  ) {}

  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.#string) i = this.#readString(chunk, i);
      else if (this.#scalar) i = this.#readScalar(chunk, i);
      else i = this.#readToken(chunk, i);
    }
  }

  end(): unknown {
    if (this.#scalar) this.#value(this.#parseScalar());
    if (!this.#done || this.#string) throw syntax('it ends before the value does');
    return this.#root;
  }

  /** Reads string bytes up to the closing quote; returns where reading goes on. */
  #readString(chunk: Buffer, from: number): number {
    const string = this.#string!;
    let i = from;
    if (string.escaped) {
      string.escaped = false;
      i++;
    }
    for (;;) {
      const quote = chunk.indexOf(0x22, i);
      const backslash = chunk.indexOf(0x5c, i);
      if (backslash >= 0 && (quote < 0 || backslash < quote)) {
        if (backslash + 1 >= chunk.length) {
          string.escaped = true;
          string.body.push(chunk.subarray(from));
          return chunk.length;
        }
        i = backslash + 2;
        continue;
      }
      if (quote < 0) {
        string.body.push(chunk.subarray(from));
        return chunk.length;
      }
      string.body.push(chunk.subarray(from, quote));
      this.#string = undefined;
      const text = string.body.end();
      if (string.isKey) this.#key(text);
      else this.#value(text);
      return quote + 1;
    }
  }

  #readScalar(chunk: Buffer, from: number): number {
    let i = from;
    while (i < chunk.length && !SCALAR_END.has(chunk[i]!)) i++;
    this.#scalar += chunk.toString('latin1', from, i);
    if (i < chunk.length) this.#value(this.#parseScalar());
    return i;
  }

  #parseScalar(): unknown {
    const text = this.#scalar;
    this.#scalar = '';
    if (!/^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)$/.test(text))
      throw syntax(text.slice(0, 40));
    return JSON.parse(text) as unknown;
  }

  #readToken(chunk: Buffer, i: number): number {
    const byte = chunk[i]!;
    if (WHITESPACE.has(byte)) return i + 1;
    const top = this.#stack.at(-1);
    if (this.#done) throw syntax('more after the value');
    if (top?.expect === ',' || top?.expect === ':') return this.#punctuation(top, byte, i);
    if (byte === 0x7d && top?.kind === 'object' && top.expect === 'key') return this.#close(i);
    if (byte === 0x5d && top?.kind === 'array') return this.#close(i);
    if (top?.kind === 'object' && top.expect === 'key') {
      if (byte !== 0x22) throw syntax('a key that is not a string');
      this.#string = {
        isKey: true,
        body: new SpillingString(Infinity, this.openFile),
        escaped: false,
      };
      return i + 1;
    }
    return this.#startValue(byte, i);
  }

  #punctuation(top: Frame, byte: number, i: number): number {
    if (top.expect === ':') {
      if (byte !== 0x3a) throw syntax('a key without a colon');
      top.expect = 'value';
      return i + 1;
    }
    if (byte === 0x2c) {
      top.expect = top.kind === 'object' ? 'key' : 'value';
      return i + 1;
    }
    if ((byte === 0x7d && top.kind === 'object') || (byte === 0x5d && top.kind === 'array'))
      return this.#close(i);
    throw syntax(`an unexpected ${String.fromCharCode(byte)}`);
  }

  #startValue(byte: number, i: number): number {
    if (byte === 0x7b) this.#stack.push({ kind: 'object', value: {}, expect: 'key' });
    else if (byte === 0x5b) this.#stack.push({ kind: 'array', value: [], expect: 'value' });
    else if (byte === 0x22) {
      const keep = this.#isResultText() ? this.keepChars : Infinity;
      this.#string = {
        isKey: false,
        body: new SpillingString(keep, this.openFile),
        escaped: false,
      };
    } else {
      this.#scalar = String.fromCharCode(byte);
    }
    return i + 1;
  }

  /** True where a string value is `result.content[i].text` of a JSON-RPC response. */
  #isResultText(): boolean {
    const [message, result, content, block] = this.#stack;
    return (
      this.#stack.length === 4 &&
      message?.kind === 'object' &&
      message.key === 'result' &&
      result?.kind === 'object' &&
      result.key === 'content' &&
      content?.kind === 'array' &&
      block?.kind === 'object' &&
      block.key === 'text'
    );
  }

  #close(i: number): number {
    const frame = this.#stack.pop()!;
    this.#value(frame.value);
    return i + 1;
  }

  #key(key: string): void {
    const top = this.#stack.at(-1) as Extract<Frame, { kind: 'object' }>;
    top.key = key;
    top.expect = ':';
  }

  #value(value: unknown): void {
    const top = this.#stack.at(-1);
    if (!top) {
      this.#root = value;
      this.#done = true;
    } else if (top.kind === 'array') {
      top.value.push(value);
      top.expect = ',';
    } else {
      // As JSON.parse does: `__proto__` is a key like any other, never the prototype.
      Object.defineProperty(top.value, top.key!, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      top.expect = ',';
    }
  }
}
