import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fdatasync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  write,
} from 'node:fs';
import path from 'node:path';
import type { ChatMessage, Usage } from '../../workers/protocol/api.ts';
import { NifflerError } from '../errors.ts';

export type TurnOutcome = 'answered' | 'cancelled' | 'max-steps' | 'error';

/** One line of a session's JSONL transcript. */
export type TranscriptEntry =
  | { type: 'session'; id: string; root: string; createdAt: string; version: string }
  | { type: 'turn-start'; time: string; turn: number; model: string }
  | {
      type: 'message';
      time: string;
      turn: number;
      message: ChatMessage;
      model?: string;
      usage?: Usage;
    }
  | {
      type: 'turn-end';
      time: string;
      turn: number;
      outcome: TurnOutcome;
      usage: Usage;
      costUsd?: number;
      error?: string;
      steps: number;
    };

export interface LoadedTranscript {
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
export const checkSessionId = (id: string): void => {
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

/**
 * An append-only JSONL transcript. Entries are written in order off the main thread;
 * `flushed()` resolves once everything appended so far is on disk — one fdatasync for all of it
 * (the agent loop awaits it before each model request and at the end of a turn) — so a killed
 * daemon loses nothing that was written, and a slow disk never stalls the daemon's other sessions.
 */
export class Transcript {
  #fd: number | null;
  #chain: Promise<void> = Promise.resolve();
  #unsynced = false;

  private constructor(
    readonly id: string,
    readonly file: string,
    fd: number,
  ) {
    this.#fd = fd;
  }

  /** Opens (creating when absent) the transcript `<dir>/<id>.jsonl`. */
  static open(dir: string, id: string): Transcript {
    checkSessionId(id);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${id}.jsonl`);
    return new Transcript(id, file, openSync(file, 'a', 0o600));
  }

  /** Queues one entry; a write failure surfaces through `flushed()`. */
  append(entry: TranscriptEntry): void {
    const fd = this.#fd;
    if (fd === null) throw new NifflerError('internal', `transcript ${this.id} is closed`);
    const data = Buffer.from(JSON.stringify(entry) + '\n');
    this.#queue(() => writeAll(fd, data));
    this.#unsynced = true;
  }

  #queue(step: () => Promise<void>): void {
    this.#chain = this.#chain.then(step);
    // Observed by flushed(); this keeps a failure from being reported as unhandled meanwhile.
    this.#chain.catch(() => {});
  }

  /** Resolves when every entry appended so far is on disk; rejects with what went wrong. */
  async flushed(): Promise<void> {
    const fd = this.#fd;
    if (fd !== null && this.#unsynced) {
      this.#unsynced = false;
      this.#queue(() => datasync(fd));
    }
    try {
      await this.#chain;
    } catch (error) {
      throw new NifflerError(
        'internal',
        `could not write the transcript ${this.file}: ${(error as Error).message}; check the disk, then go on with niffler --resume ${this.id}`,
        {},
        { cause: error },
      );
    }
  }

  /** Closes the file once the queued entries are written and on disk. */
  async close(): Promise<void> {
    const fd = this.#fd;
    if (fd === null) return;
    if (this.#unsynced) this.#queue(() => datasync(fd));
    this.#fd = null;
    await this.#chain.catch(() => {});
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
        `${file}:${index + 1}: ${torn ? 'the last line is incomplete (written when the process was killed)' : 'unreadable line'}; skipped`,
      );
    }
  });
  const messages = entries.flatMap((e) => (e.type === 'message' ? [e.message] : []));
  return { id, file, entries, messages, warnings };
};

export interface SessionSummary {
  id: string;
  title: string;
  updatedAt: string;
  messages: number;
  file: string;
}

const titleOf = (messages: ChatMessage[]): string => {
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
