import { randomBytes } from 'node:crypto';
import { constants } from 'node:os';
import path from 'node:path';
import { execa, type Result } from 'execa';
import type { BwrapProbe } from '../protocol/sandbox.ts';
import type { ToolArgs, ToolContext, ToolPortMessage } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { safeEnvironment } from '../shared/environment.ts';
import { killGroup, waitGroupGone } from '../shared/process-group.ts';
import { endTagged, killTagged, runningPids } from '../shared/tagged-processes.ts';
import {
  inSandbox,
  NO_RC,
  probeBwrap,
  withLimits,
  type Launch,
} from '../shared/sandbox-command.ts';
import { enforceGitGuard, gitPlaces, type GuardedEntry } from '../shared/git-places.ts';
import { OutputSink } from './output-sink.ts';
import type { ToolIo } from './io.ts';
import { done, fail } from './result.ts';
import { whenAborted } from '../shared/abort.ts';

const GRACE_MS = 2000;

const tell = (io: ToolIo, message: ToolPortMessage) => io.port?.postMessage(message);

/** bubblewrap as found in this thread, when the pool's owner did not say (tests call in-process). */
let probed: Promise<BwrapProbe> | undefined;

interface Plan {
  launch: Launch;
  sandboxed: boolean;
  env: Record<string, string>;
  /** Unsandboxed on Linux: the variable that marks the command's processes (`killTagged`). */
  tag?: string;
  note?: string;
  /** Sandboxed: the `.git` entries checked once the command has ended (`enforceGitGuard`). */
  guard?: GuardedEntry[];
}

/** What a command may have besides bash's own: variables, and directories it may write. */
interface PlanExtra {
  env?: Record<string, string>;
  writable?: readonly string[];
}

/** `command` after `. envFile` (its errors silenced), so what the file exports holds for it. */
const withEnvFile = (command: string, envFile: string | undefined): string =>
  envFile ? `. '${envFile.replace(/'/g, `'\\''`)}' >/dev/null 2>&1\n${command}` : command;

/** The command's environment: the minimal one, the pager off, its tag, and `extraEnv`. */
const commandEnv = (
  context: ToolContext,
  sandboxed: boolean,
  tag: string | undefined,
  extraEnv: Record<string, string>,
): Record<string, string> =>
  safeEnvironment(
    {
      GIT_PAGER: 'cat',
      PAGER: 'cat',
      GIT_TERMINAL_PROMPT: '0',
      ...(sandboxed ? { TMPDIR: '/tmp' } : {}),
      ...(tag ? { NIFFLER_CALL: tag.slice('NIFFLER_CALL='.length) } : {}),
      ...extraEnv,
    },
    process.env,
    context.bash.passEnv,
  );

/** What the sandbox lets the command write, read, see and reach; `git` as `gitPlaces` found it. */
const sandboxPolicy = (
  context: ToolContext,
  extra: PlanExtra,
  git: ReturnType<typeof gitPlaces> | undefined,
) => {
  const settings = context.bash;
  return {
    write: [context.root, ...(extra.writable ?? [])],
    // Active skills of yours: their scripts run, read-only (one in $NIFFLER_HOME stays visible);
    // the session's CLAUDE_ENV_FILE's directory, for its hooks' exports.
    ...(context.readOnlyPaths?.length || settings.envFile
      ? {
          read: [
            ...(context.readOnlyPaths ?? []),
            ...(settings.envFile ? [path.dirname(settings.envFile)] : []),
          ],
        }
      : {}),
    hide: settings.hide,
    network: settings.network,
    ...(git ? { protect: git.readOnly } : { gitWritable: true }),
  };
};

/**
 * How the command runs: in bwrap or not, under which limits and environment (`extra.env` added
 * to the minimal one, `extra.writable` writable besides the workspace); or why it cannot. With
 * `bash.envFile`, the session's environment file is read first (readable in the sandbox).
 */
export const plan = async (
  command: string,
  context: ToolContext,
  extra: PlanExtra = {},
): Promise<Plan | ToolResult> => {
  const { bash: settings, root } = context;
  const script = withEnvFile(command, settings.envFile);
  const base = withLimits({ file: 'bash', args: [...NO_RC, '-c', script] }, settings.limits);
  const probe =
    settings.sandbox === 'off' ? undefined : (settings.bwrap ?? (await (probed ??= probeBwrap())));
  if (settings.sandbox === 'bwrap' && !probe?.ok)
    return fail(
      'exec-failed',
      `tools.bash.sandbox is "bwrap", but ${probe?.ok === false ? probe.reason : 'bwrap is missing'}. ` +
        'Install bubblewrap (apt install bubblewrap), or set tools.bash.sandbox to auto or off.',
    );
  const sandboxed = probe?.ok === true;
  // Without a sandbox's PID namespace, what leaves the process group is found by this variable.
  const tag =
    !sandboxed && process.platform === 'linux'
      ? `NIFFLER_CALL=${randomBytes(8).toString('hex')}`
      : undefined;
  const env = commandEnv(context, sandboxed, tag, extra.env ?? {});
  // Every .git of the workspace read-only, unless the user approved this call's git write.
  const git = sandboxed && !settings.gitWritable ? gitPlaces(root) : undefined;
  const launch = probe?.ok
    ? inSandbox(base, probe.path, sandboxPolicy(context, extra, git), root)
    : base;
  const note = !sandboxed && settings.sandbox === 'auto' ? settings.note : undefined;
  return {
    launch,
    sandboxed,
    env,
    ...(tag ? { tag } : {}),
    ...(note ? { note } : {}),
    ...(git ? { guard: git.guard } : {}),
  };
};

/** Said when a sandboxed command met a read-only place: why, and how to get a git write. */
const READ_ONLY_GIT =
  "in the sandbox every .git of the workspace (and niffler's config) is read-only; a git command " +
  'that writes (commit, checkout, stash…) asks the user when it is a bash call of its own';

/** What `enforceGitGuard` moved aside after the command, as notes for its result. */
export const guardNotes = (planned: Plan): string[] => {
  const moved = planned.guard ? enforceGitGuard(planned.guard) : [];
  return moved.length
    ? [
        `moved aside, so git never runs it outside the sandbox: ${moved.join(', ')} (a .git the command made or replaced)`,
      ]
    : [];
};

/**
 * The signal a sandboxed command died of: bwrap reports it as exit status 128 + n, as a shell
 * does (so a command that itself exits 137 reads as SIGKILL too).
 */
export const signalOf = (result: Result, sandboxed: boolean): string | undefined => {
  if (result.signal) return result.signal;
  const code = result.exitCode ?? 0;
  if (!sandboxed || code <= 128) return undefined;
  return Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0];
};

/**
 * `bash`: runs `bash -c command` in the workspace root as the leader of a new process group,
 * with no stdin and a minimal environment (no provider keys unless `tools.bash.passEnv` names
 * them), under `tools.bash.limits`, and — where bubblewrap runs, unless `tools.bash.sandbox` is
 * off — in a sandbox that may write only the workspace and a private /tmp. On timeout the group
 * gets SIGTERM, then SIGKILL; when the leader exits, what is left of its group (background jobs)
 * is ended too. Cancelling (`io.signal`) ends the group the same way. The group's pid goes to
 * `io.port`, so the owner can still end it if the worker hangs.
 */
export const bash = async (
  args: ToolArgs<'bash'>,
  context: ToolContext,
  io: ToolIo,
): Promise<ToolResult> => {
  const { bashTimeout, bashMaxTimeout } = context.limits;
  const asked = args.timeout ?? bashTimeout;
  const seconds = Math.min(asked, bashMaxTimeout);
  const planned = await plan(args.command, context);
  if ('ok' in planned) return planned;
  const sink = await OutputSink.open(context, 'bash');
  const all = (chunk: Buffer | string) => sink.write(chunk);
  const { result, ended, pid } = await runGroup(planned, context.root, seconds, io, { all });
  const { output, savedTo } = await sink.close();
  if (pid === undefined)
    return fail('exec-failed', `could not start bash in ${context.root}: ${result.shortMessage}`);
  const notes: string[] = planned.note ? [planned.note] : [];
  notes.push(...guardNotes(planned));
  if (planned.guard && /Read-only file system|Device or resource busy/.test(output))
    notes.push(READ_ONLY_GIT);
  if (asked > seconds) notes.push(`timeout ${asked}s is above the maximum; used ${seconds}s`);
  const signal = signalOf(result, planned.sandboxed);
  if (ended === 'timeout')
    notes.push(`timed out after ${seconds}s; the whole process group was ended`);
  else if (ended === 'canceled') notes.push('canceled; the whole process group was ended');
  else if (signal) notes.push(`killed by signal ${signal}`);
  else notes.push(`exit code ${result.exitCode ?? '?'}`);
  const text = `${output || '(no output)'}${output.endsWith('\n') ? '' : '\n'}[${notes.join('; ')}]`;
  const exitCode = signal ? null : (result.exitCode ?? null);
  const data = { exitCode, signal: signal ?? null, sandboxed: planned.sandboxed };
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

/** Where a command's output goes (both streams together, or each), and what it reads on stdin. */
interface GroupOutput {
  all?: (chunk: Buffer | string) => void;
  stdout?: (chunk: Buffer | string) => void;
  stderr?: (chunk: Buffer | string) => void;
  input?: string;
}

/** Runs the planned command as a process group, ending the group on timeout or cancel. */
export const runGroup = async (
  planned: Plan,
  cwd: string,
  seconds: number,
  io: ToolIo,
  output: GroupOutput,
) => {
  const { tag } = planned;
  const before = tag ? runningPids() : undefined;
  const child = execa(planned.launch.file, planned.launch.args, {
    cwd,
    detached: true,
    cleanup: false,
    all: output.all !== undefined,
    buffer: false,
    reject: false,
    ...(output.input !== undefined ? { input: output.input } : { stdin: 'ignore' as const }),
    forceKillAfterDelay: false,
    env: planned.env,
    extendEnv: false,
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
  const offCancel = whenAborted(io.signal, cancel);
  // When the leader exits, what is left ends too: its group, and (unsandboxed) what left the
  // group. Until then the output pipe may be held open by them, and the call would not return.
  if (pid !== undefined)
    child.nodeChildProcess.once('exit', () => {
      killGroup(pid, 'SIGKILL');
      if (tag) killTagged(tag, before);
    });
  if (output.all) child.all?.on('data', output.all);
  if (output.stdout) child.stdout?.on('data', output.stdout);
  if (output.stderr) child.stderr?.on('data', output.stderr);
  const result = await child;
  clearTimeout(timer);
  clearTimeout(force);
  offCancel();
  if (pid !== undefined) {
    await waitGroupGone(pid);
    // Once more, until they are gone: one may have been started while the group was ending,
    // and a kill lands a moment after it is sent.
    if (tag) await endTagged(tag, before ?? new Set());
    tell(io, { type: 'exited', pid });
  }
  return { result, ended, pid };
};
