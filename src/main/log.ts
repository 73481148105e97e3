import { RotatingLog } from '../workers/shared/rotating-log.ts';
import { LOG_LEVELS, type LogLevel } from '../workers/protocol/log-level.ts';
import { redact } from '../workers/shared/redact.ts';

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

interface LogOptions {
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
): Logger =>
  fileLogger(options, fields, {
    log: options.file
      ? new RotatingLog(options.file, options.maxBytes ?? 5 * 1024 * 1024, 1)
      : undefined,
  });

/** What a logger and its children share: the file they write. */
interface FileState {
  log: RotatingLog | undefined;
}

const fileLogger = (
  options: LogOptions,
  fields: Record<string, unknown>,
  state: FileState,
): Logger => {
  const level = options.level ?? 'info';
  const write = (lvl: LogLevel, msg: string, data?: Record<string, unknown>) => {
    if (!state.log || RANK[lvl] < RANK[level]) return;
    // Every string as it is, before JSON escapes a secret in it (see redact).
    const secrets = options.secrets?.() ?? [];
    const line = JSON.stringify({
      time: new Date().toISOString(),
      level: lvl,
      msg: redact(msg, secrets),
      ...redact(fields, secrets),
      ...(data ? redact(data, secrets) : {}),
    });
    // Logging never takes the process down; `niffler daemon status` says what is wrong.
    state.log.append(`${line}\n`);
  };
  return {
    debug: (msg, data) => write('debug', msg, data),
    info: (msg, data) => write('info', msg, data),
    warn: (msg, data) => write('warn', msg, data),
    error: (msg, data) => write('error', msg, data),
    child: (more) => fileLogger(options, { ...fields, ...more }, state),
    problem: () => state.log?.problem,
  };
};

/** A logger that drops everything (tests, one-shot paths with no log file). */
export const silentLogger: Logger = createLogger({});

export const parseLogLevel = (value: string | undefined): LogLevel | undefined =>
  LOG_LEVELS.find((level) => level === value);
