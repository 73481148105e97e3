import { appendFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fsFailure, makeDirSync } from './fs-errors.ts';

/**
 * The one log file writer of niffler (the daemon's JSON log, each MCP server's log): appends
 * whole lines (0600, its directory made when missing), rotates to `.1`…`.N` once past `maxBytes`,
 * and never throws — a full disk or a removed directory is kept in `problem` for the status
 * commands to show, and the next write tries again. Its size is looked at once, then counted, so
 * a line costs no stat (another process writing the same file makes the count low: it rotates
 * later than `maxBytes`, never earlier).
 */
export class RotatingLog {
  #size = -1;
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
      if (this.#size < 0) {
        makeDirSync(path.dirname(this.file));
        this.#size = Math.max(0, sizeOf(this.file));
      }
      if (this.#size + Buffer.byteLength(lines) > this.maxBytes && this.#size > 0) this.#rotate();
      appendFileSync(this.file, lines, { mode: 0o600 });
      this.#size += Buffer.byteLength(lines);
      this.problem = undefined;
    } catch (error) {
      this.#size = -1;
      this.problem = fsFailure('write the log', this.file, error);
    }
  }

  #rotate(): void {
    rmSync(`${this.file}.${this.generations}`, { force: true });
    for (let n = this.generations - 1; n >= 1; n--)
      if (sizeOf(`${this.file}.${n}`) >= 0)
        renameSync(`${this.file}.${n}`, `${this.file}.${n + 1}`);
    renameSync(this.file, `${this.file}.1`);
    this.#size = 0;
  }
}

const sizeOf = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return -1;
  }
};
