import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { once } from 'node:events';
import type { ToolContext } from '../protocol/tools.ts';
import { countLines, cutNote, outputFile } from './output.ts';

/**
 * Collects a command's output as it streams: all of it goes to a file under the outputs
 * directory, while memory holds only the first and last `maxChars` characters.
 */
export class OutputSink {
  #decoder = new StringDecoder('utf8');
  #head = '';
  #tail = '';
  #total = 0;
  /** Lines so far, counted as `countLines` counts them. */
  #lines = 0;
  /** Whether the last line so far has no `\n` yet: the next text continues it. */
  #open = false;
  #file: WriteStream;
  #path: string;
  #max: number;

  private constructor(file: string, max: number) {
    this.#path = file;
    this.#max = max;
    this.#file = createWriteStream(file, { mode: 0o600 });
  }

  static async open(context: ToolContext, tool: string): Promise<OutputSink> {
    return new OutputSink(await outputFile(context, tool), context.limits.maxChars);
  }

  write(chunk: Buffer | string): void {
    this.#file.write(chunk);
    this.#append(typeof chunk === 'string' ? chunk : this.#decoder.write(chunk));
  }

  #append(text: string): void {
    this.#total += text.length;
    if (text.length > 0) {
      this.#lines += countLines(text) - (this.#open ? 1 : 0);
      this.#open = !text.endsWith('\n');
    }
    if (this.#head.length < this.#max) this.#head += text.slice(0, this.#max - this.#head.length);
    this.#tail += text;
    if (this.#tail.length > 2 * this.#max) this.#tail = this.#tail.slice(-this.#max);
  }

  /** The output for the model; the file is kept only when the output had to be cut. */
  async close(): Promise<{ output: string; savedTo?: string }> {
    this.#append(this.#decoder.end());
    this.#file.end();
    await once(this.#file, 'close');
    if (this.#total <= this.#max) {
      await rm(this.#path, { force: true });
      return { output: this.#head };
    }
    const half = Math.floor(this.#max / 2);
    const note = cutNote(this.#max, this.#total, this.#lines, this.#path);
    return {
      output: this.#head.slice(0, half) + note + this.#tail.slice(-(this.#max - half)),
      savedTo: this.#path,
    };
  }
}
