import { closeSync, fstatSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fsFailure, makeDirSync } from './fs-errors.ts';
import { appendWholeSync } from './whole-write.ts';

/** How long a log keeps its file open after its last line. */
const IDLE_CLOSE_MS = 2_000;
/** How often a log that keeps writing checks that its file is still the one at its path. */
const RECHECK_MS = 1_000;

/**
 * The one log file writer of niffler (the daemon's JSON log, each MCP server's log): appends
 * whole lines (0600, its directory made when missing), rotates to `.1`…`.N` once past `maxBytes`,
 * and never throws — a full disk or a removed directory is kept in `problem` for the status
 * commands to show, and the next write tries again. Its size is looked at once, then counted, so
 * a line costs no stat (another process writing the same file makes the count low: it rotates
 * later than `maxBytes`, never earlier). While lines keep coming the file stays open (a line
 * costs one write, not an open, a write and a close: the gateway logs every call); it is closed
 * after 2 s without one, and reopened within a second when someone removed it meanwhile.
 */
export class RotatingLog {
  #size = -1;
  #fd = -1;
  #lastWrite = 0;
  #checked = 0;
  #idle: NodeJS.Timeout | undefined;
  /** Why the last write failed (file, errno in plain words); undefined once one succeeds. */
  problem: string | undefined;

  constructor(
    readonly file: string,
    private readonly maxBytes: number,
    /** Rotated files kept (`.1` is the newest). */
    private readonly generations = 3,
  ) {}

  /** Appends `lines` (whole lines, each ending in a newline). */
  append(lines: string): void {
    try {
      const now = Date.now();
      if (this.#fd >= 0 && now - this.#checked > RECHECK_MS) {
        this.#checked = now;
        if (fstatSync(this.#fd).nlink === 0) this.#close();
      }
      if (this.#fd < 0) this.#open(now);
      const bytes = Buffer.from(lines);
      if (this.#size + bytes.length > this.maxBytes && this.#size > 0) this.#rotate(now);
      appendWholeSync(this.#fd, bytes);
      this.#size += bytes.length;
      this.#lastWrite = now;
      if (!this.#idle) this.#idle = setTimeout(() => this.#closeWhenIdle(), IDLE_CLOSE_MS).unref();
      this.problem = undefined;
    } catch (error) {
      this.#close();
      this.problem = fsFailure('write the log', this.file, error);
    }
  }

  #open(now: number): void {
    makeDirSync(path.dirname(this.file));
    this.#fd = openSync(this.file, 'a', 0o600);
    this.#size = fstatSync(this.#fd).size;
    this.#checked = now;
  }

  #close(): void {
    if (this.#fd >= 0) {
      try {
        closeSync(this.#fd);
      } catch {
        // Closing a log that failed is best effort.
      }
    }
    this.#fd = -1;
    this.#size = -1;
  }

  #closeWhenIdle(): void {
    this.#idle = undefined;
    const quiet = Date.now() - this.#lastWrite;
    if (quiet >= IDLE_CLOSE_MS) return this.#close();
    this.#idle = setTimeout(() => this.#closeWhenIdle(), IDLE_CLOSE_MS - quiet).unref();
  }

  #rotate(now: number): void {
    this.#close();
    rmSync(`${this.file}.${this.generations}`, { force: true });
    for (let n = this.generations - 1; n >= 1; n--)
      if (sizeOf(`${this.file}.${n}`) >= 0)
        renameSync(`${this.file}.${n}`, `${this.file}.${n + 1}`);
    renameSync(this.file, `${this.file}.1`);
    this.#open(now);
  }
}

const sizeOf = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return -1;
  }
};
