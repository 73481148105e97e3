import { randomBytes } from 'node:crypto';
import { closeSync, openSync, rmSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { describeFsError } from '../shared/fs-errors.ts';
import { writeAllSync } from '../shared/whole-write.ts';

// A text block of a tool result too long for the model is written to its file as it arrives, and
// only its start is kept: the result's JSON-RPC message (see spill-parser.ts) carries, instead of
// the whole text, its start followed by a marker that says where the rest went. The marker holds
// a random key of this thread, so no server can forge one to name a file of its choosing.

/** Where a spilled text went, and how long it was. */
export interface SpillInfo {
  file: string;
  /** The whole text's length in UTF-16 units (what `string.length` would say). */
  chars: number;
  /** Why the text could not be saved whole (the disk): the start is all there is. */
  error?: string;
}

const KEY = randomBytes(16).toString('hex');
const MARK = `\u0000niffler-spill:${KEY}:`;

/** `start` standing for a whole text saved as `info` says. */
const spilledText = (start: string, info: SpillInfo): string =>
  `${start}${MARK}${JSON.stringify(info)}`;

/** The start and the file of a text that `spilledText` made; undefined for any other text. */
export const readSpilled = (text: string): { start: string; info: SpillInfo } | undefined => {
  const at = text.lastIndexOf(MARK);
  if (at < 0) return undefined;
  try {
    return {
      start: text.slice(0, at),
      info: JSON.parse(text.slice(at + MARK.length)) as SpillInfo,
    };
  } catch {
    return undefined;
  }
};

const ESCAPES: Record<number, string> = {
  0x22: '"',
  0x5c: '\\',
  0x2f: '/',
  0x62: '\b',
  0x66: '\f',
  0x6e: '\n',
  0x72: '\r',
  0x74: '\t',
};

/**
 * The body of one JSON string, fed in raw (still escaped) pieces: kept whole while short; past
 * `keepChars` characters, written to a file as it comes (decoded, UTF-8) with only the first
 * `keepChars` characters kept. Pieces split anywhere, escapes and characters included.
 */
export class SpillingString {
  #raw: Buffer[] = [];
  #start = '';
  #chars = 0;
  #decoder = new StringDecoder('utf8');
  #escape = '';
  #highSurrogate = '';
  #fd: number | undefined;
  #file: string | undefined;
  #error: string | undefined;
  #out = Buffer.alloc(64 * 1024);
  #used = 0;

  constructor(
    private readonly keepChars: number,
    /** A fresh file for the whole text, made when the text turns out long. */
    private readonly openFile: () => string,
  ) {}

  /** Adds a raw piece of the string's body (the bytes between its quotes). */
  push(piece: Buffer): void {
    if (this.#file === undefined) {
      this.#raw.push(piece);
      this.#chars += piece.length; // bytes: at least the characters they hold
      if (this.#chars <= this.keepChars) return;
      this.#startSpilling();
      return;
    }
    this.#decode(piece);
  }

  /** The string's value: the whole text, or its start and where the rest went. */
  end(): string {
    if (this.#file === undefined) {
      const body = this.#raw.length === 1 ? this.#raw[0]! : Buffer.concat(this.#raw);
      return JSON.parse(`"${body.toString('utf8')}"`) as string;
    }
    this.#flushSurrogate();
    this.#flush();
    if (this.#fd !== undefined) closeSync(this.#fd);
    // Long in bytes (escapes, multi-byte characters) but not in characters: kept whole after all.
    if (this.#chars <= this.keepChars && !this.#error) {
      rmSync(this.#file, { force: true });
      return this.#start;
    }
    const info: SpillInfo = { file: this.#file, chars: this.#chars };
    if (this.#error) info.error = this.#error;
    return spilledText(this.#start, info);
  }

  #startSpilling(): void {
    const raw = Buffer.concat(this.#raw);
    this.#raw = [];
    this.#chars = 0;
    try {
      this.#file = this.openFile();
      this.#fd = openSync(this.#file, 'wx', 0o600);
    } catch (error) {
      this.#file ??= '';
      this.#error = describeFsError(error);
    }
    this.#decode(raw);
  }

  #decode(piece: Buffer): void {
    let from = 0;
    for (let i = 0; i < piece.length; i++) {
      const byte = piece[i]!;
      if (this.#escape) {
        this.#escape += String.fromCharCode(byte);
        if (this.#escape.length === 2 && this.#escape !== '\\u') this.#char(ESCAPES[byte] ?? '');
        else if (this.#escape.length === 6)
          this.#char(String.fromCharCode(Number.parseInt(this.#escape.slice(2), 16)));
        else continue;
        this.#escape = '';
        from = i + 1;
      } else if (byte === 0x5c) {
        this.#raw8(piece.subarray(from, i));
        this.#escape = '\\';
      } else {
        // A character starts at every byte but UTF-8 continuation bytes; four-byte ones are two
        // UTF-16 units.
        if ((byte & 0xc0) !== 0x80) this.#chars += byte >= 0xf0 ? 2 : 1;
      }
    }
    if (!this.#escape) this.#raw8(piece.subarray(from));
  }

  /** Unescaped UTF-8 bytes, characters already counted. */
  #raw8(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#flushSurrogate();
    if (this.#start.length < this.keepChars) this.#keep(this.#decoder.write(bytes));
    this.#write(bytes);
  }

  /** One decoded escape: a character, or half of a surrogate pair. */
  #char(char: string): void {
    const code = char.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdbff && !this.#highSurrogate) {
      this.#highSurrogate = char;
      return;
    }
    const text = this.#highSurrogate + char;
    this.#highSurrogate = '';
    this.#chars += text.length;
    if (this.#start.length < this.keepChars) this.#keep(text);
    this.#write(Buffer.from(text, 'utf8'));
  }

  /** A high surrogate escape not followed by a low one: written as it is (U+FFFD in UTF-8). */
  #flushSurrogate(): void {
    if (!this.#highSurrogate) return;
    const lone = this.#highSurrogate;
    this.#highSurrogate = '';
    this.#chars += 1;
    if (this.#start.length < this.keepChars) this.#keep(lone);
    this.#write(Buffer.from(lone, 'utf8'));
  }

  #keep(text: string): void {
    this.#start += text.slice(0, this.keepChars - this.#start.length);
  }

  #write(bytes: Buffer): void {
    if (this.#fd === undefined) return;
    if (this.#used + bytes.length > this.#out.length) this.#flush();
    if (bytes.length > this.#out.length) return this.#writeNow(bytes);
    bytes.copy(this.#out, this.#used);
    this.#used += bytes.length;
  }

  #flush(): void {
    const used = this.#used;
    this.#used = 0;
    if (used > 0) this.#writeNow(this.#out.subarray(0, used));
  }

  #writeNow(bytes: Buffer): void {
    if (this.#fd === undefined) return;
    try {
      writeAllSync(this.#fd, bytes);
    } catch (error) {
      this.#error = `could not save the rest to ${this.#file}: ${describeFsError(error)}`;
      closeSync(this.#fd);
      this.#fd = undefined;
    }
  }
}
