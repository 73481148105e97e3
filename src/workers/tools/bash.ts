import type { MessagePort } from 'node:worker_threads';
import { execa } from 'execa';
import type { ToolArgs, ToolContext, ToolPortMessage } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { OutputSink } from './output-sink.ts';
import { killGroup, waitGroupGone } from './process-group.ts';
import { done, fail } from './result.ts';

const GRACE_MS = 2000;

const tell = (port: MessagePort | undefined, message: ToolPortMessage) =>
  port?.postMessage(message);

/**
 * `bash`: runs `bash -c command` in the workspace root as the leader of a new process group,
 * with no stdin. On timeout the group gets SIGTERM, then SIGKILL; when the leader exits, what is
 * left of its group (background jobs) is ended too. The group's pid goes to `port` so the owner
 * can end it if the task is cancelled.
 */
export const bash = async (
  args: ToolArgs<'bash'>,
  context: ToolContext,
  port?: MessagePort,
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
  if (pid !== undefined) tell(port, { type: 'spawned', pid });
  let timedOut = false;
  let force: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    if (pid === undefined) return;
    timedOut = true;
    killGroup(pid, 'SIGTERM');
    force = setTimeout(() => killGroup(pid, 'SIGKILL'), GRACE_MS);
  }, seconds * 1000);
  if (pid !== undefined) child.nodeChildProcess.once('exit', () => killGroup(pid, 'SIGKILL'));
  child.all?.on('data', (chunk: Buffer | string) => sink.write(chunk));
  const result = await child;
  clearTimeout(timer);
  clearTimeout(force);
  if (pid !== undefined) {
    await waitGroupGone(pid);
    tell(port, { type: 'exited', pid });
  }
  const { output, savedTo } = await sink.close();
  if (pid === undefined)
    return fail('exec-failed', `could not start bash in ${context.root}: ${result.shortMessage}`);
  const notes: string[] = [];
  if (asked > seconds) notes.push(`timeout ${asked}s is above the maximum; used ${seconds}s`);
  if (timedOut) notes.push(`timed out after ${seconds}s; the whole process group was ended`);
  else if (result.signal) notes.push(`killed by signal ${result.signal}`);
  else notes.push(`exit code ${result.exitCode ?? '?'}`);
  const text = `${output || '(no output)'}${output.endsWith('\n') ? '' : '\n'}[${notes.join('; ')}]`;
  const data = { exitCode: result.exitCode ?? null, signal: result.signal ?? null, timedOut };
  if (timedOut)
    return fail(
      'timeout',
      `the command ran longer than ${seconds}s and was ended with its process group. Pass a ` +
        `larger timeout (at most ${bashMaxTimeout}s) or run less at once.`,
      text,
    );
  return done(text, { ...(savedTo ? { savedTo } : {}), data });
};
