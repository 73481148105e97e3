import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fdatasync,
  fstatSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  write,
} from 'node:fs';
import path from 'node:path';
import type { ChatMessage } from '../../workers/protocol/api.ts';
import { NifflerError } from '../errors.ts';
import type { TranscriptEntry } from '../calls/transcript-entry.ts';
import { fsFailure, makeDirSync } from '../../workers/shared/fs-errors.ts';

export type { TranscriptEntry };

interface LoadedTranscript {
  id: string;
  file: string;
  entries: TranscriptEntry[];
  messages: ChatMessage[];
  /** Lines that could not be read (a torn last line after a crash), with where they were. */
  warnings: string[];
}

/** A new session id: sortable by time, unique. */
export const newSessionId = (): string =>
  `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..+/, '').replace('T', '-')}-${randomBytes(3).toString('hex')}`;

/**
 * Throws a `usage` error unless `id` can only name a file in the sessions directory: letters,
 * digits, `.`, `_` and `-`, not starting with a dot (so no `/`, no `..`), at most 128.
 */
const checkSessionId = (id: string): void => {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id)) return;
  throw new NifflerError(
    'usage',
    `${JSON.stringify(id.slice(0, 200))} is not a session id: ids are letters, digits, ".", "_" ` +
      'and "-", with no "/" or ".." (list them with niffler sessions)',
  );
};

const writeAll = (fd: number, data: Buffer): Promise<void> =>
  new Promise((resolve, reject) => {
    const step = (offset: number) =>
      write(fd, data, offset, data.length - offset, null, (error, written) => {
        if (error) reject(error);
        else if (offset + written < data.length) step(offset + written);
        else resolve();
      });
    step(0);
  });

const datasync = (fd: number): Promise<void> =>
  new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));

const NEWLINE = Buffer.from('\n');

/**
 * Cuts a torn last line (a process killed mid-write) off the file open on `fd`, so what is
 * appended next starts on a line of its own. Returns the size the file then has.
 */
const cutTornEnd = (fd: number, size: number): number => {
  const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
  for (let end = size; end > 0;) {
    const start = Math.max(0, end - chunk.length);
    const read = readSync(fd, chunk, 0, end - start, start);
    const newline = chunk.subarray(0, read).lastIndexOf(10);
    if (newline === read - 1 && end === size) return size;
    if (newline >= 0) {
      ftruncateSync(fd, start + newline + 1);
      return start + newline + 1;
    }
    end = start;
  }
  if (size > 0) ftruncateSync(fd, 0);
  return 0;
};

/**
 * An append-only JSONL transcript. Entries are written in order off the main thread, each whole or
 * not at all (what a failed write put in is cut off again); `flushed()` resolves once everything
 * appended so far is on disk — one fdatasync for all of it (the agent loop awaits it before each
 * model request and at the end of a turn) — so a killed daemon loses nothing that was written, and
 * a slow disk never stalls the daemon's other sessions. A disk fault never stops the session: it
 * goes on in memory, and `flushed()` reports the fault once, naming the file and the errno.
 */
export class Transcript {
  #fd: number | null;
  #closed = false;
  #chain: Promise<void> = Promise.resolve();
  #unsynced = false;
  /** Where the file ends: a failed write is cut back to it. */
  #size: number;
  /** A failed write could not be cut back: the next record starts a new line. */
  #torn = false;
  /** The first write failure since `flushed()` last reported one. */
  #failure: unknown;

  private constructor(
    readonly id: string,
    readonly file: string,
    fd: number | null,
    size: number,
    /** Why the file could not be opened: nothing is written, and every flush says so. */
    private readonly openFailure?: unknown,
  ) {
    this.#fd = fd;
    this.#size = size;
  }

  /** Opens (creating when absent) the transcript `<dir>/<id>.jsonl`; a torn last line is cut off. */
  static open(dir: string, id: string): Transcript {
    checkSessionId(id);
    const file = path.join(dir, `${id}.jsonl`);
    try {
      makeDirSync(dir);
      const fd = openSync(file, 'a+', 0o600);
      try {
        return new Transcript(id, file, fd, cutTornEnd(fd, fstatSync(fd).size));
      } catch (error) {
        closeSync(fd);
        throw error;
      }
    } catch (error) {
      return new Transcript(id, file, null, 0, error);
    }
  }

  /** Queues one entry; a write failure surfaces through `flushed()`. */
  append(entry: TranscriptEntry): void {
    if (this.#closed) throw new NifflerError('internal', `transcript ${this.id} is closed`);
    const fd = this.#fd;
    if (fd === null) return;
    const data = Buffer.from(JSON.stringify(entry) + '\n');
    this.#queue(() => this.#writeRecord(fd, data));
    this.#unsynced = true;
  }

  async #writeRecord(fd: number, data: Buffer): Promise<void> {
    const record = this.#torn ? Buffer.concat([NEWLINE, data]) : data;
    const start = this.#size;
    try {
      await writeAll(fd, record);
      this.#size += record.length;
      this.#torn = false;
    } catch (error) {
      try {
        ftruncateSync(fd, start);
      } catch {
        this.#torn = true;
        this.#size = fstatSync(fd).size;
      }
      throw error;
    }
  }

  #queue(step: () => Promise<void>): void {
    // A failure is kept for flushed(); the entries after it are still tried (a full disk may
    // have room again).
    this.#chain = this.#chain.then(step).catch((error: unknown) => {
      this.#failure ??= error;
    });
  }

  /** Resolves when every entry appended so far is on disk; rejects with what went wrong. */
  async flushed(): Promise<void> {
    if (this.openFailure !== undefined) throw this.#describe(this.openFailure);
    const fd = this.#fd;
    if (fd !== null && this.#unsynced) {
      this.#unsynced = false;
      this.#queue(() => datasync(fd));
    }
    await this.#chain;
    const failure = this.#failure;
    this.#failure = undefined;
    if (failure !== undefined) throw this.#describe(failure);
  }

  #describe(error: unknown): NifflerError {
    return new NifflerError(
      'internal',
      `${fsFailure('write the transcript', this.file, error)}; the session goes on, but what is not written is lost when the daemon ends (fix the disk, then go on with niffler --resume ${this.id})`,
      { file: this.file, errno: (error as NodeJS.ErrnoException).code },
      { cause: error },
    );
  }

  /** Closes the file once the queued entries are written and on disk. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const fd = this.#fd;
    if (fd === null) return;
    if (this.#unsynced) this.#queue(() => datasync(fd));
    this.#fd = null;
    await this.#chain;
    closeSync(fd);
  }
}

/** Reads a transcript; unreadable lines are skipped with a warning, never fatal. */
export const readTranscript = (dir: string, id: string): LoadedTranscript => {
  checkSessionId(id);
  const file = path.join(dir, `${id}.jsonl`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new NifflerError(
        'usage',
        `no session "${id}" in this workspace; list them with niffler sessions`,
      );
    throw error;
  }
  const lines = text.split('\n');
  const entries: TranscriptEntry[] = [];
  const warnings: string[] = [];
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    try {
      entries.push(JSON.parse(line) as TranscriptEntry);
    } catch {
      const torn = index >= lines.length - 2;
      warnings.push(
        `${file}:${index + 1}: ${torn ? 'the last line is incomplete (written when the process was killed); skipped, and cut off when the session goes on' : 'unreadable line; skipped'}`,
      );
    }
  });
  const messages = entries.flatMap((e) => (e.type === 'message' ? [e.message] : []));
  return { id, file, entries, messages, warnings };
};

interface SessionSummary {
  id: string;
  title: string;
  updatedAt: string;
  messages: number;
  file: string;
}

export const titleOf = (messages: ChatMessage[]): string => {
  const first = messages.find((m) => m.role === 'user');
  if (!first || first.role !== 'user') return '(empty)';
  const text =
    typeof first.content === 'string'
      ? first.content
      : first.content.map((p) => (p.type === 'text' ? p.text : '[image]')).join(' ');
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 70 ? `${line.slice(0, 69)}…` : line;
};

/** The sessions of a workspace, newest first. */
export const listSessions = (dir: string): SessionSummary[] => {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  return names
    .map((name) => {
      const id = name.slice(0, -'.jsonl'.length);
      const file = path.join(dir, name);
      const { messages } = readTranscript(dir, id);
      return {
        id,
        title: titleOf(messages),
        updatedAt: statSync(file).mtime.toISOString(),
        messages: messages.length,
        file,
      };
    })
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id));
};
