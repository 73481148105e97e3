import { fstatSync, writeSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';
import { NifflerError, exitCodeFor } from '../../main/errors.ts';

/**
 * Whether stdout is there to be written by hand: a short command then makes no stream (Node's
 * first use of process.stdout loads its stream modules, ~5 ms of a 75 ms `mcp list`). A terminal,
 * a file, and a pipe or socket as a parent hands it over (blocking: a full pipe waits for its
 * reader) take every write at once. A descriptor another program left non-blocking says EAGAIN
 * when full, and a reader gone says EPIPE: the stream takes the rest from there (it waits, or
 * ends the command quietly, launch.ts).
 */
let direct: boolean | undefined;

const writeOut = (text: string): void => {
  if (direct === undefined) {
    try {
      fstatSync(1);
      direct = true;
    } catch {
      direct = false;
    }
  }
  let rest = Buffer.from(text);
  if (direct) {
    try {
      while (rest.length) rest = rest.subarray(writeSync(1, rest));
      return;
    } catch {
      // EAGAIN (non-blocking and full) or EPIPE: the stream takes the rest, as said above.
      direct = false;
    }
  }
  process.stdout.write(rest);
};

/** The only writers to stdout/stderr outside the Ink app. */
export const print = (text = ''): void => {
  writeOut(text.endsWith('\n') || text === '' ? text || '\n' : text + '\n');
};

export const printJson = (value: unknown): void => {
  writeOut(JSON.stringify(value, null, 2) + '\n');
};

export const warn = (text: string): void => {
  process.stderr.write(`${paint('yellow', 'warning:')} ${text}\n`);
};

export const info = (text: string): void => {
  process.stderr.write(text + '\n');
};

/** Tells a person at a terminal why this command takes a second; scripts see nothing. */
export const announceDaemonStart = (): void => {
  if (process.stderr.isTTY) info('starting the niffler daemon for this repository…');
};

const colorEnabled = (): boolean =>
  process.stderr.isTTY && !process.env['NO_COLOR'] && process.env['TERM'] !== 'dumb';

const CODES = { red: 31, yellow: 33, green: 32, dim: 2, bold: 1, cyan: 36 } as const;

/** ANSI color when stderr/stdout is a terminal and NO_COLOR is unset. */
export const paint = (
  color: keyof typeof CODES,
  text: string,
  stream: NodeJS.WriteStream = process.stderr,
): string =>
  (stream === process.stderr ? colorEnabled() : stream.isTTY && !process.env['NO_COLOR'])
    ? `\u001b[${CODES[color]}m${text}\u001b[0m`
    : text;

/** Prints an error as `niffler: message` and returns the exit code for it. */
export const reportError = (error: unknown): number => {
  const message = error instanceof Error ? error.message : String(error);
  const lines = message.split('\n');
  process.stderr.write(
    `${paint('red', 'niffler:')} ${lines[0]}\n${lines
      .slice(1)
      .map((l) => `  ${l}\n`)
      .join('')}`,
  );
  if (!(error instanceof NifflerError) && error instanceof Error && process.env['NIFFLER_DEBUG'])
    process.stderr.write(`${error.stack}\n`);
  return exitCodeFor(error);
};

/** A plain text table: columns padded to the widest cell (colors do not count), header first. */
export const formatTable = (header: string[], rows: string[][]): string => {
  const width = (cell: string) => stripVTControlCharacters(cell).length;
  const widths = header.map((h, c) =>
    Math.max(width(h), ...rows.map((row) => width(row[c] ?? ''))),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, c) =>
        c === cells.length - 1 ? cell : cell + ' '.repeat(widths[c]! - width(cell)),
      )
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
};
