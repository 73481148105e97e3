import { spawn, type ChildProcess } from 'node:child_process';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killGroup, waitGroupGone } from '../shared/process-group.ts';

const MAX_LINE_BYTES = 64 * 1024 * 1024;

export { SAFE_ENV_KEYS, safeEnvironment } from '../shared/environment.ts';

export interface ProcessTransportOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Terminate → kill grace when closing. */
  killGraceMs: number;
  onStderr: (text: string) => void;
  /** A stdout line that is not JSON-RPC: logged, never fatal. */
  onNoise: (line: string, error: unknown) => void;
  /** Names the resource limit an exit came from, if any (see server-launch.ts). */
  explainExit?: (exit: ProcessExit) => string | undefined;
}

/** How the process ended, once it has. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The limit it ended on, as a phrase: `went over its memory limit (…) and ended`. */
  limit?: string;
}

/**
 * The SDK's stdio framing (`serializeMessage`, `deserializeMessage`) over a child that leads its own
 * process group, so closing ends the server and everything it spawned: stdin closed, SIGTERM to
 * the group, SIGKILL after the grace period. (The SDK's `StdioClientTransport` spawns in our
 * group and passes LOGNAME; we need neither.)
 */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private exited: Promise<void> | undefined;
  exit: ProcessExit | undefined;

  constructor(private readonly options: ProcessTransportOptions) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ProcessTransport already started');
    const { command, args, cwd, env } = this.options;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        cwd,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        const limit = this.options.explainExit?.({ code, signal });
        this.exit = { code, signal, ...(limit ? { limit } : {}) };
      });
      child.once('close', (code, signal) => {
        this.exit ??= { code, signal };
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.read(chunk));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => this.options.onStderr(text));
    });
  }

  // Lines are split here (not in the SDK's ReadBuffer) so a non-protocol line can be logged whole;
  // partial lines are kept as a list of chunks so a large message is copied once.
  private read(chunk: Buffer): void {
    let start = 0;
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, at);
      const line = this.pending.length > 0 ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      start = at + 1;
      this.handleLine(line.toString('utf8').replace(/\r$/, ''));
    }
    if (start >= chunk.length) return;
    this.pending.push(chunk.subarray(start));
    this.pendingBytes += chunk.length - start;
    if (this.pendingBytes > MAX_LINE_BYTES) {
      this.pending = [];
      this.pendingBytes = 0;
      this.onerror?.(new Error(`a stdout line passed ${MAX_LINE_BYTES} bytes without a newline`));
      void this.close();
    }
  }

  private handleLine(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      this.options.onNoise(line, error);
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.exit) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * Ends the process group: stdin closed and SIGTERM, SIGKILL after the grace period, and then
   * waits until no process of the group runs (the leader may be gone while its children live on).
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited) return;
    const closed = this.exited;
    const pid = child.pid;
    child.stdin?.end();
    if (pid !== undefined && !this.exit) {
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), this.options.killGraceMs);
      await closed;
      clearTimeout(timer);
    }
    if (pid !== undefined && killGroup(pid, 'SIGKILL'))
      await waitGroupGone(pid, this.options.killGraceMs);
    this.pending = [];
  }
}
