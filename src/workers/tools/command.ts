import type { CommandOutcome, CommandSpec, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { guardNotes, plan, runGroup, signalOf } from './bash.ts';
import type { ToolIo } from './io.ts';
import { fail } from './result.ts';

/** A command that prints this many times what is kept is ended: nothing more would be read. */
const FLOOD_FACTOR = 8;

/** Keeps the first `max` bytes of a stream and counts the rest. */
class Capped {
  readonly #parts: Buffer[] = [];
  #kept = 0;
  total = 0;
  constructor(private readonly max: number) {}

  add(chunk: Buffer | string): void {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.total += data.length;
    const room = this.max - this.#kept;
    if (room <= 0) return;
    const kept = data.subarray(0, room);
    this.#parts.push(Buffer.from(kept));
    this.#kept += kept.length;
  }

  get text(): string {
    return Buffer.concat(this.#parts).toString('utf8');
  }
}

/**
 * Runs a command for niffler (a hook, a repository tool, a `` !`cmd` ``) as bash runs the model's
 * commands — sandbox, limits, minimal environment, its own process group — with `spec.input` on
 * stdin, stdout and stderr kept apart and capped; one that floods output is ended. The outcome
 * travels as the result's `data`.
 */
export const runCommand = async (
  spec: CommandSpec,
  context: ToolContext,
  io: ToolIo,
): Promise<ToolResult> => {
  const planned = await plan(spec.command, context, {
    ...(spec.env ? { env: spec.env } : {}),
    ...(spec.writable ? { writable: spec.writable } : {}),
  });
  if ('ok' in planned) return planned;
  const flood = new AbortController();
  const signal = AbortSignal.any([io.signal, flood.signal]);
  const stdout = new Capped(spec.maxOutputBytes);
  const stderr = new Capped(spec.maxOutputBytes);
  const watch = (stream: Capped) => (chunk: Buffer | string) => {
    stream.add(chunk);
    if (stream.total > spec.maxOutputBytes * FLOOD_FACTOR) flood.abort();
  };
  const { result, ended, pid } = await runGroup(
    planned,
    context.root,
    spec.timeoutSeconds,
    { ...io, signal },
    {
      stdout: watch(stdout),
      stderr: watch(stderr),
      ...(spec.input !== undefined ? { input: spec.input } : {}),
    },
  );
  if (pid === undefined)
    return fail('exec-failed', `could not start bash: ${result.shortMessage ?? 'unknown error'}`);
  const signalName = signalOf(result, planned.sandboxed);
  const notes = [...(planned.note ? [planned.note] : []), ...guardNotes(planned)];
  const outcome: CommandOutcome = {
    exitCode: signalName ? null : (result.exitCode ?? null),
    signal: signalName ?? null,
    stdout: stdout.text,
    stderr: stderr.text,
    cut: stdout.total > spec.maxOutputBytes || stderr.total > spec.maxOutputBytes,
    sandboxed: planned.sandboxed,
    ...(flood.signal.aborted ? { ended: 'flood' as const } : ended ? { ended } : {}),
    ...(notes.length ? { note: notes.join('; ') } : {}),
  };
  return { ok: true, output: outcome.stdout, data: { ...outcome } };
};
