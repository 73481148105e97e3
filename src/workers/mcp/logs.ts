import type { McpServerSpec, McpTransportKind } from '../protocol/mcp.ts';
import { RotatingLog } from '../shared/rotating-log.ts';
import { secretsFrom, serverSecretValues } from '../shared/redact.ts';

/**
 * A server's log file (`<logsDir>/<server>.log`): stderr lines, protocol warnings and the server's
 * `notifications/message`, each prefixed with time and source, capped at `maxBytes` and rotated
 * to `.1`…`.3` (see `RotatingLog`). Writing never throws.
 */
export class ServerLog extends RotatingLog {
  constructor(
    file: string,
    maxBytes: number,
    /** Applied to every line before it is written (secrets out). */
    private readonly redact: (line: string) => string = (line) => line,
  ) {
    super(file, maxBytes, 3);
  }

  /** Appends one line per line of `text`, each prefixed with time and `source`. */
  write(source: string, text: string): void {
    const time = new Date().toISOString();
    this.append(
      text
        .replace(/\r?\n$/, '')
        .split(/\r?\n/)
        .map((line) => `${time} [${source}] ${this.redact(line)}\n`)
        .join(''),
    );
  }
}

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

  constructor(readonly log: ServerLog) {}

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
