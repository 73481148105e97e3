import path from 'node:path';
import { RotatingLog } from '../shared/rotating-log.ts';

/** Lines for a server's log, each with time and where it came from. */
const stamp = (source: string, text: string): string => {
  const time = new Date().toISOString();
  return text
    .replace(/\r?\n$/, '')
    .split(/\r?\n/)
    .map((line) => `${time} [${source}] ${line}\n`)
    .join('');
};

/**
 * A server's log file (`<logsDir>/<name>.log`, rotated at 1 MiB): what it wrote on stderr and
 * the messages it logged; the end of its stderr kept to say why it exited.
 */
export class ServerLog {
  readonly #log: RotatingLog;
  #stderrTail = '';

  constructor(logsDir: string, name: string) {
    this.#log = new RotatingLog(
      path.join(logsDir, `${name.replace(/[^\w.-]/g, '_')}.log`),
      1024 * 1024,
    );
  }

  get file(): string {
    return this.#log.file;
  }

  stderr(text: string): void {
    this.#stderrTail = (this.#stderrTail + text).slice(-2048);
    this.#log.append(stamp('stderr', text));
  }

  /** A message the server logged (window/logMessage). */
  message(text: string): void {
    this.#log.append(stamp('log', text));
  }

  /** The last line the server wrote on stderr, and where the rest is. */
  stderrHint(): string {
    const last = this.#stderrTail.trim().split('\n').at(-1)?.trim();
    this.#stderrTail = '';
    return `${last ? `: ${last.slice(0, 200)}` : ''} (its log: ${this.#log.file})`;
  }
}
