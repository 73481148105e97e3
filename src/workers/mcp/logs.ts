import { appendFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { McpServerSpec, McpTransportKind } from '../protocol/mcp.ts';
import { fsFailure, makeDirSync } from '../shared/fs-errors.ts';
import { secretsFrom, serverSecretValues } from '../shared/redact.ts';

const GENERATIONS = 3;

/**
 * A server's log file (`<logsDir>/<server>.log`): stderr lines, protocol warnings and the server's
 * `notifications/message`, capped at `maxBytes` and rotated to `.1`…`.3`. Writing never throws.
 */
export class RotatingLog {
  private size = -1;
  /** Why the last write failed (file, errno in plain words); undefined once one succeeds. */
  problem: string | undefined;

  constructor(
    readonly file: string,
    private readonly maxBytes: number,
    /** Applied to every line before it is written (secrets out). */
    private readonly redact: (line: string) => string = (line) => line,
  ) {}

  /** Appends one line per line of `text`, each prefixed with time and `source`. */
  write(source: string, text: string): void {
    const time = new Date().toISOString();
    const lines = text
      .replace(/\r?\n$/, '')
      .split(/\r?\n/)
      .map((line) => `${time} [${source}] ${this.redact(line)}\n`)
      .join('');
    try {
      if (this.size < 0) {
        makeDirSync(path.dirname(this.file));
        this.size = Math.max(0, statSize(this.file));
      }
      if (this.size + lines.length > this.maxBytes && this.size > 0) this.rotate();
      appendFileSync(this.file, lines, { mode: 0o600 });
      this.size += Buffer.byteLength(lines);
      this.problem = undefined;
    } catch (error) {
      // A full disk or a removed directory must not take the worker down; the next write retries,
      // and `niffler mcp status` says what is wrong meanwhile.
      this.size = -1;
      this.problem = fsFailure('write the log', this.file, error);
    }
  }

  private rotate(): void {
    rmSync(`${this.file}.${GENERATIONS}`, { force: true });
    for (let n = GENERATIONS - 1; n >= 1; n--)
      if (statSize(`${this.file}.${n}`) >= 0)
        renameSync(`${this.file}.${n}`, `${this.file}.${n + 1}`);
    renameSync(this.file, `${this.file}.1`);
    this.size = 0;
  }
}

const statSize = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return -1;
  }
};

/** A file name for a server's log: its name with anything unsafe replaced. */
export const logFileName = (server: string): string =>
  `${server.replace(/[^a-zA-Z0-9._-]/g, '_')}.log`;

const secretsBySpec = new WeakMap<McpServerSpec, string[]>();

/** The secret values of a server's definition, worked out once per spec. */
export const specSecrets = (spec: McpServerSpec): string[] => {
  let secrets = secretsBySpec.get(spec);
  if (!secrets) {
    secrets = secretsFrom(serverSecretValues(spec));
    secretsBySpec.set(spec, secrets);
  }
  return secrets;
};

/**
 * What a server writes besides JSON-RPC, into its log: stderr (the last lines kept for an error
 * message), stray output on its protocol channel, and its `notifications/message`.
 */
export class ServerOutput {
  private tail: string[] = [];

  constructor(readonly log: RotatingLog) {}

  /** The last lines of stderr since `reset`. */
  get stderrTail(): string[] {
    return this.tail;
  }

  reset(): void {
    this.tail = [];
  }

  stderr(text: string): void {
    this.log.write('stderr', text);
    this.tail = [...this.tail, ...text.split('\n').filter((l) => l.trim())].slice(-5);
  }

  /** A line on stdout, or a WebSocket frame, that is not JSON-RPC: logged, never fatal. */
  noise(kind: McpTransportKind, line: string): void {
    const where = kind === 'stdio' ? 'output on stdout' : 'message';
    this.log.write('warning', `ignored non-protocol ${where}: ${line.slice(0, 2000)}`);
  }

  serverLog(level: string, logger: string | undefined, data: unknown): void {
    const source = `log:${level}${logger ? `:${logger}` : ''}`;
    this.log.write(source, typeof data === 'string' ? data : JSON.stringify(data));
  }
}
