import { execa } from 'execa';
import type { ToolArgs, ToolContext, ToolPortMessage } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { OutputSink } from './output-sink.ts';
import { killGroup, waitGroupGone } from '../shared/process-group.ts';
import type { ToolIo } from './registry.ts';
import { done, fail } from './result.ts';

const GRACE_MS = 2000;

const tell = (io: ToolIo, message: ToolPortMessage) => io.port?.postMessage(message);

/**
 * `bash`: runs `bash -c command` in the workspace root as the leader of a new process group,
 * with no stdin. On timeout the group gets SIGTERM, then SIGKILL; when the leader exits, what is
 * left of its group (background jobs) is ended too. Cancelling (`io.signal`) ends the group the
 * same way. The group's pid goes to `io.port`, so the owner can still end it if the worker hangs.
 */
export const bash = async (
  args: ToolArgs<'bash'>,
  context: ToolContext,
  io: ToolIo,
): Promise<ToolResult> => {
  const { bashTimeout, bashMaxTimeout } = context.limits;
  const asked = args.timeout ?? bashTimeout;
  const seconds = Math.min(asked, bashMaxTimeout);
  const sink = await OutputSink.open(context, 'bash');
  const child = execa('bash', ['-c', args.command], {
    cwd: context.root,
    detached: true,
    cleanup: false,
    all: true,
    buffer: false,
    reject: false,
    stdin: 'ignore',
    forceKillAfterDelay: false,
    env: { GIT_PAGER: 'cat', PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' },
  });
  const pid = child.pid;
  if (pid !== undefined) tell(io, { type: 'spawned', pid });
  let ended: 'timeout' | 'canceled' | undefined;
  let force: NodeJS.Timeout | undefined;
  const end = (why: 'timeout' | 'canceled') => {
    if (pid === undefined || ended) return;
    ended = why;
    killGroup(pid, 'SIGTERM');
    force = setTimeout(() => killGroup(pid, 'SIGKILL'), GRACE_MS);
  };
  const timer = setTimeout(() => end('timeout'), seconds * 1000);
  const cancel = () => end('canceled');
  io.signal.addEventListener('abort', cancel, { once: true });
  if (io.signal.aborted) cancel();
  if (pid !== undefined) child.nodeChildProcess.once('exit', () => killGroup(pid, 'SIGKILL'));
  child.all?.on('data', (chunk: Buffer | string) => sink.write(chunk));
  const result = await child;
  clearTimeout(timer);
  clearTimeout(force);
  io.signal.removeEventListener('abort', cancel);
  if (pid !== undefined) {
    await waitGroupGone(pid);
    tell(io, { type: 'exited', pid });
  }
  const { output, savedTo } = await sink.close();
  if (pid === undefined)
    return fail('exec-failed', `could not start bash in ${context.root}: ${result.shortMessage}`);
  const notes: string[] = [];
  if (asked > seconds) notes.push(`timeout ${asked}s is above the maximum; used ${seconds}s`);
  if (ended === 'timeout')
    notes.push(`timed out after ${seconds}s; the whole process group was ended`);
  else if (ended === 'canceled') notes.push('canceled; the whole process group was ended');
  else if (result.signal) notes.push(`killed by signal ${result.signal}`);
  else notes.push(`exit code ${result.exitCode ?? '?'}`);
  const text = `${output || '(no output)'}${output.endsWith('\n') ? '' : '\n'}[${notes.join('; ')}]`;
  const data = { exitCode: result.exitCode ?? null, signal: result.signal ?? null };
  if (ended === 'canceled') return fail('canceled', 'the command was canceled', text);
  if (ended === 'timeout')
    return fail(
      'timeout',
      `the command ran longer than ${seconds}s and was ended with its process group. Pass a ` +
        `larger timeout (at most ${bashMaxTimeout}s) or run less at once.`,
      text,
    );
  return done(text, { ...(savedTo ? { savedTo } : {}), data });
};
