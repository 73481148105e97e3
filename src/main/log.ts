import { appendFileSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { fsFailure, makeDirSync } from '../workers/shared/fs-errors.ts';
import { redact } from './config/redact.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, data?: Record<string, unknown>): void;
  info(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
  error(msg: string, data?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
  /** Why the last line could not be written (file, errno in plain words); undefined when it was. */
  problem(): string | undefined;
}

export interface LogOptions {
  file?: string;
  level?: LogLevel;
  /** Rotate when the file passes this many bytes (one `.1` generation kept). */
  maxBytes?: number;
  /** Values that must never be written (expanded secrets). */
  secrets?: () => readonly string[];
}

/**
 * The only log writer: JSON lines, secrets redacted, rotated by size. Without a file it writes
 * nothing (the front-end owns stdout and stderr).
 */
export const createLogger = (
  options: LogOptions = {},
  fields: Record<string, unknown> = {},
): Logger => fileLogger(options, fields, { ready: false, size: undefined, problem: undefined });

/**
 * What a logger and its children share about their file: whether its directory exists, and its
 * size — looked at once, then counted, so a line costs no stat. (Another process writing the same
 * file makes the count low: the file rotates later than `maxBytes`, never earlier.)
 */
interface FileState {
  ready: boolean;
  size: number | undefined;
  /** The last write's failure, until a write succeeds. */
  problem: string | undefined;
}

const fileLogger = (
  options: LogOptions,
  fields: Record<string, unknown>,
  state: FileState,
): Logger => {
  const level = options.level ?? 'info';
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  const write = (lvl: LogLevel, msg: string, data?: Record<string, unknown>) => {
    if (!options.file || RANK[lvl] < RANK[level]) return;
    // Every string as it is, before JSON escapes a secret in it (see redact).
    const secrets = options.secrets?.() ?? [];
    const line = JSON.stringify({
      time: new Date().toISOString(),
      level: lvl,
      msg: redact(msg, secrets),
      ...redact(fields, secrets),
      ...(data ? redact(data, secrets) : {}),
    });
    try {
      if (!state.ready) {
        makeDirSync(path.dirname(options.file));
        state.ready = true;
      }
      state.size ??= fileSize(options.file);
      if (state.size >= maxBytes) {
        rotateIfNeeded(options.file, maxBytes);
        state.size = fileSize(options.file);
      }
      appendFileSync(options.file, line + '\n', { mode: 0o600 });
      state.size += Buffer.byteLength(line) + 1;
      state.problem = undefined;
    } catch (error) {
      // Logging must never take the process down; `niffler daemon status` says what is wrong.
      state.problem = fsFailure('write the log', options.file, error);
    }
  };
  return {
    debug: (msg, data) => write('debug', msg, data),
    info: (msg, data) => write('info', msg, data),
    warn: (msg, data) => write('warn', msg, data),
    error: (msg, data) => write('error', msg, data),
    child: (more) => fileLogger(options, { ...fields, ...more }, state),
    problem: () => state.problem,
  };
};

const fileSize = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

/** Renames `file` to `file.1` once it passes `maxBytes`. */
export const rotateIfNeeded = (file: string, maxBytes: number): void => {
  try {
    if (statSync(file).size >= maxBytes) renameSync(file, `${file}.1`);
  } catch {
    // No file yet: nothing to rotate.
  }
};

/** A logger that drops everything (tests, one-shot paths with no log file). */
export const silentLogger: Logger = createLogger({});

export const parseLogLevel = (value: string | undefined): LogLevel | undefined =>
  value === 'debug' || value === 'info' || value === 'warn' || value === 'error'
    ? value
    : undefined;
