import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fdatasyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
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
 * An append-only JSONL transcript. Every entry is written and flushed to disk before `append`
 * returns, so a killed daemon loses nothing that was written.
 */
export class Transcript {
  #fd: number | null;
  private constructor(
    readonly id: string,
    readonly file: string,
    fd: number,
  ) {
    this.#fd = fd;
  }

  /** Opens (creating when absent) the transcript `<dir>/<id>.jsonl`. */
  static open(dir: string, id: string): Transcript {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, `${id}.jsonl`);
    return new Transcript(id, file, openSync(file, 'a', 0o600));
  }

  append(entry: TranscriptEntry): void {
    if (this.#fd === null) throw new NifflerError('internal', `transcript ${this.id} is closed`);
    writeSync(this.#fd, JSON.stringify(entry) + '\n');
    fdatasyncSync(this.#fd);
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}

/** Reads a transcript; unreadable lines are skipped with a warning, never fatal. */
export const readTranscript = (dir: string, id: string): LoadedTranscript => {
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
