import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import {
  deserializeMessage,
  serializeMessage,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/client';
import { makeDirSync } from '../shared/fs-errors.ts';
import { outputName } from '../shared/output.ts';
import {
  forgetGroup,
  killGroup,
  processStartTime,
  recordGroup,
  selfAsOwner,
  waitGroupGone,
} from '../shared/process-group.ts';
import { serverArgv, spawnServerProcess, takeEarlySpawn } from './early-spawn.ts';
import type { ProcessExit } from './server-launch.ts';
import type { TraceTap } from './trace.ts';

export type { ProcessExit } from './server-launch.ts';
import { SpillingParser } from './spill-parser.ts';

const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** A line longer than this is read by a SpillingParser as it arrives, not held whole. */
const SPILL_AT_BYTES = 1024 * 1024;

export { safeEnvironment } from '../shared/environment.ts';

interface ProcessTransportOptions {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Terminate → kill grace when closing. */
  killGraceMs: number;
  /**
   * Where the process group is recorded while it runs (`$NIFFLER_HOME/run/<key>.servers`), so a
   * daemon that follows a killed one can end it; `label` names it there. Not recorded when absent.
   */
  record?: { dir: string; label: string };
  /** Called when the group could not be recorded (a full or read-only disk). */
  onRecordError?: (error: Error) => void;
  /**
   * Where the text of a tool result longer than `keepChars()` goes as it arrives (files named
   * after `label` in `dir`): the message then carries its start (see spill.ts). Held whole when
   * absent.
   */
  spill?: { dir: string; label: string; keepChars: () => number };
  onStderr: (text: string) => void;
  /** A stdout line that is not JSON-RPC: logged, never fatal. */
  onNoise: (line: string, error: unknown) => void;
  /** Names the resource limit an exit came from, if any (see server-launch.ts). */
  explainExit?: (exit: ProcessExit) => string | undefined;
}

/** How long a closing server has to exit on the end of its input before SIGTERM. */
const EOF_GRACE_MS = 250;

/**
 * The SDK's stdio framing (`serializeMessage`, `deserializeMessage`) over a child that leads its own
 * process group, so closing ends the server and everything it spawned: stdin closed, then SIGTERM
 * to the group, then SIGKILL after the grace period. The group is recorded under the run directory
 * while it runs, and on Linux the server gets SIGKILL when the thread that started it ends
 * (`setpriv --pdeathsig`): a killed daemon leaves nothing running that its successor cannot find.
 * (The SDK's `StdioClientTransport` spawns in our group and passes LOGNAME; we need neither.)
 */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Sees each message with the JSON text it was written or read as (the protocol trace). */
  tap: TraceTap | undefined = undefined;

  private child: ChildProcess | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The long line being read now, if any: its parser, or why it is being skipped. */
  private large: { parser: SpillingParser; bytes: number; error?: unknown } | undefined;
  private exited: Promise<void> | undefined;
  exit: ProcessExit | undefined;

  constructor(private readonly options: ProcessTransportOptions) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ProcessTransport already started');
    const { cwd, env } = this.options;
    const argv = serverArgv(this.options.command, this.options.args, cwd, env);
    // The process the worker spawned for this very launch at start-up, if there is one (see
    // early-spawn.ts): its spawn has happened.
    const adopted = takeEarlySpawn(argv, cwd, env);
    const child = adopted ?? spawnServerProcess(argv, cwd, env);
    this.child = child;
    this.exited = new Promise((done) => child.once('close', () => done()));
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
    if (adopted) {
      child.on('error', (error) => this.onerror?.(error));
      this.record(child.pid);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        this.record(child.pid);
        resolve();
      });
    });
  }

  private record(pid: number | undefined): void {
    const where = this.options.record;
    if (!where || pid === undefined) return;
    const failure = recordGroup(where.dir, {
      pid,
      start: processStartTime(pid),
      label: where.label,
      owner: selfAsOwner(),
    });
    if (failure) this.options.onRecordError?.(failure);
  }

  // Lines are split here (not in the SDK's ReadBuffer) so a non-protocol line can be logged whole;
  // partial lines are kept as a list of chunks so a large message is copied once, and a long one
  // goes through a SpillingParser as it arrives.
  private read(chunk: Buffer): void {
    let start = 0;
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, at);
      start = at + 1;
      if (this.large) {
        this.endLarge(piece);
        continue;
      }
      const line = this.pending.length > 0 ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      this.handleLine(line.toString('utf8').replace(/\r$/, ''));
    }
    if (start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.large) return this.pushLarge(rest);
    this.pending.push(rest);
    this.pendingBytes += rest.length;
    const spill = this.options.spill;
    if (spill && this.pendingBytes > SPILL_AT_BYTES) {
      const parser = new SpillingParser(spill.keepChars(), () => {
        makeDirSync(spill.dir);
        return outputName(spill.dir, spill.label);
      });
      this.large = { parser, bytes: 0 };
      const held = this.pending;
      this.pending = [];
      this.pendingBytes = 0;
      for (const part of held) this.pushLarge(part);
    } else if (this.pendingBytes > MAX_LINE_BYTES) {
      this.pending = [];
      this.pendingBytes = 0;
      this.onerror?.(new Error(`a stdout line passed ${MAX_LINE_BYTES} bytes without a newline`));
      void this.close();
    }
  }

  private pushLarge(part: Buffer): void {
    const large = this.large!;
    large.bytes += part.length;
    if (large.error !== undefined) return;
    try {
      large.parser.push(part);
    } catch (error) {
      large.error = error;
    }
  }

  private endLarge(last: Buffer): void {
    this.pushLarge(last);
    const large = this.large!;
    this.large = undefined;
    let message: JSONRPCMessage | undefined;
    let failure = large.error;
    try {
      if (failure === undefined)
        // What is left once the long texts went to their file is small: checked as any line is.
        message = deserializeMessage(JSON.stringify(large.parser.end()));
    } catch (error) {
      failure = error;
    }
    if (message) {
      this.tap?.('in', message, undefined);
      this.onmessage?.(message);
    } else this.options.onNoise(`(a line of ${large.bytes} bytes)`, failure);
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
    this.tap?.('in', message, line);
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.exit) return Promise.reject(new Error('Not connected'));
    const line = serializeMessage(message);
    this.tap?.('out', message, line);
    return new Promise((resolve) => {
      if (stdin.write(line)) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * Ends the process group: stdin closed; SIGTERM to the group if the server has not exited a
   * moment later; SIGKILL after the grace period; then waits until no process of the group runs
   * (the leader may be gone while its children live on), and forgets the group's record.
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited) return;
    const closed = this.exited;
    const pid = child.pid;
    child.stdin?.end();
    if (pid !== undefined && !this.exit) {
      const waited = new AbortController();
      const grace = delay(Math.min(EOF_GRACE_MS, this.options.killGraceMs), undefined, {
        signal: waited.signal,
      });
      await Promise.race([closed, grace.catch(() => {})]);
      waited.abort();
    }
    if (pid !== undefined && !this.exit) {
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), this.options.killGraceMs);
      await closed;
      clearTimeout(timer);
    }
    if (pid !== undefined && killGroup(pid, 'SIGKILL'))
      await waitGroupGone(pid, this.options.killGraceMs);
    if (pid !== undefined && this.options.record) forgetGroup(this.options.record.dir, pid);
    this.pending = [];
  }
}
