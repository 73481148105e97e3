import { execFile, execFileSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import path from 'node:path';
import type { BwrapProbe, ResourceLimits, SandboxPolicy } from '../protocol/sandbox.ts';
import { isInside } from './confine.ts';
import { isExecutableFile } from './executable.ts';
import { gitPlaces } from './git-places.ts';

const osSignals = osConstants.signals as Record<string, number>;

// Wraps a command in resource limits (bash's ulimit, so they hold with or without a sandbox) and,
// on Linux with bubblewrap, in a sandbox: the filesystem read-only but for the paths it may
// write and a private /tmp, secrets hidden, the network cut unless allowed, its own PID
// namespace (the whole tree ends with it: no `setsid` escape), and no capabilities.

/** A command ready to spawn. */
export interface Launch {
  file: string;
  args: string[];
}

/** `PATH` lookup of an executable; null when there is none. */
export const findExecutable = (
  name: string,
  searchPath = process.env['PATH'] ?? '',
): string | null => {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    if (isExecutableFile(file)) return file;
  }
  return null;
};

/**
 * bash reads ~/.bashrc when its stdin is a socket (it takes that for sshd) — and Node's stdio
 * pipes are socket pairs. These flags keep a user's shell setup out of niffler's commands.
 */
export const NO_RC = ['--norc', '--noprofile'];

/** The `ulimit` commands for `limits`, or '' when none is set. */
const ulimitScript = (limits: ResourceLimits): string => {
  const set: string[] = [];
  if (limits.cpuSeconds) set.push(`ulimit -t ${Math.ceil(limits.cpuSeconds)}`);
  // RLIMIT_DATA, not RLIMIT_AS: runtimes (V8, Go, the JVM) reserve far more address space than
  // they use, and the data limit counts what is really writable.
  if (limits.memoryMB) set.push(`ulimit -d ${Math.ceil(limits.memoryMB * 1024)}`);
  if (limits.fileSizeMB) set.push(`ulimit -f ${Math.ceil(limits.fileSizeMB * 1024)}`);
  if (limits.processes) set.push(`ulimit -u ${Math.ceil(limits.processes)}`);
  return set.join(' && ');
};

/**
 * `file args` under `limits`: run by bash, which sets them (soft and hard, so the command cannot
 * raise them) and then becomes the command. Unchanged when no limit is set.
 */
export const withLimits = (launch: Launch, limits: ResourceLimits): Launch => {
  const script = ulimitScript(limits);
  if (!script) return launch;
  const fail = `{ echo "niffler: could not set the resource limits (${script})" >&2; exit 126; }`;
  return {
    file: 'bash',
    args: [
      ...NO_RC,
      '-c',
      `${script} || ${fail}; exec "$@"`,
      'niffler-limits',
      launch.file,
      ...launch.args,
    ],
  };
};

/** The real path of each existing entry of `paths`, without repeats. */
const existing = (paths: readonly string[]): string[] => {
  const found = new Set<string>();
  for (const entry of paths) {
    try {
      found.add(realpathSync(entry));
    } catch {
      // Missing: nothing there to hide or bind.
    }
  }
  return [...found];
};

/** bwrap's arguments to hide each path: an empty read-only directory, or /dev/null for a file. */
const hideArgs = (paths: string[]): string[] =>
  paths.flatMap((entry) =>
    statSync(entry).isDirectory()
      ? ['--tmpfs', entry, '--remount-ro', entry]
      : ['--ro-bind', '/dev/null', entry],
  );

/**
 * Paths inside a writable directory that stay read-only: the rules niffler runs under (the
 * repository's `.niffler/` and `.mcp.json`) and — unless the user approved a git write — what git
 * runs later, outside (`gitPlaces`: every `.git` of the workspace, whole). Only those that exist
 * can be bound; a new `.niffler/` a command makes is an untrusted change the trust check catches.
 */
const PROTECTED = ['.niffler', '.mcp.json'];

/** The paths of `policy` kept read-only inside its writable directories. */
const protectedPaths = (policy: SandboxPolicy, writable: readonly string[]): string[] => {
  const git = policy.gitWritable
    ? []
    : (policy.protect ?? writable.flatMap((dir) => gitPlaces(dir).readOnly));
  const all = existing([
    ...writable.flatMap((dir) => PROTECTED.map((p) => path.join(dir, p))),
    ...git,
  ]);
  // Outside every writable directory a path is read-only already (and may be hidden: kept so).
  return all.filter((entry) => writable.some((dir) => isInside(entry, dir)));
};

/**
 * bwrap's arguments for `policy`, up to and including `--`. The order matters: the read-only
 * root, a private /tmp, hidden paths, paths kept readable, writable paths, then hidden paths
 * inside readable or writable ones again (a workspace under a hidden home stays visible;
 * `$NIFFLER_HOME` inside the workspace stays hidden).
 */
const bwrapArgs = (policy: SandboxPolicy, cwd: string): string[] => {
  const hidden = existing(policy.hide);
  const writable = existing(policy.write);
  const readable = existing(policy.read ?? []);
  const bound = [...readable, ...writable];
  const protect = protectedPaths(policy, writable);
  const reHidden = hidden.filter((entry) => bound.some((dir) => isInside(entry, dir)));
  return [
    '--die-with-parent',
    '--new-session',
    '--unshare-all',
    ...(policy.network ? ['--share-net'] : []),
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    ...hideArgs(hidden),
    ...readable.flatMap((dir) => ['--ro-bind', dir, dir]),
    ...writable.flatMap((dir) => ['--bind', dir, dir]),
    ...protect.flatMap((entry) => ['--ro-bind', entry, entry]),
    ...hideArgs(reHidden),
    '--chdir',
    cwd,
    '--',
  ];
};

/** `launch` inside bubblewrap at `bwrap`, under `policy`, starting in `cwd`. */
export const inSandbox = (
  launch: Launch,
  bwrap: string,
  policy: SandboxPolicy,
  cwd: string,
): Launch => ({ file: bwrap, args: [...bwrapArgs(policy, cwd), launch.file, ...launch.args] });

/** The bwrap to try and the arguments that try it; or why there is none to try. */
const probeCommand = (searchPath: string): { file: string; args: string[] } | BwrapProbe => {
  if (process.platform !== 'linux')
    return { ok: false, reason: `bubblewrap runs only on Linux (this is ${process.platform})` };
  const file = findExecutable('bwrap', searchPath);
  if (!file) return { ok: false, reason: 'bubblewrap (bwrap) is not installed' };
  const policy: SandboxPolicy = { write: [], hide: [], network: false };
  return { file, args: [...bwrapArgs(policy, '/'), 'true'] };
};

const cannotRun = (stderr: string, error: Error): BwrapProbe => ({
  ok: false,
  reason: `bwrap cannot run here: ${stderr.trim() || error.message}`,
});

/**
 * Finds bwrap on `PATH` and runs `true` in the sandbox niffler sets up (namespaces included), so
 * a bwrap that cannot run here — user namespaces switched off, an AppArmor rule — is found now,
 * with its own words as the reason.
 */
export const probeBwrap = async (searchPath = process.env['PATH'] ?? ''): Promise<BwrapProbe> => {
  const command = probeCommand(searchPath);
  if ('ok' in command) return command;
  return new Promise((resolve) => {
    execFile(command.file, command.args, { timeout: 10_000 }, (error, _out, stderr) =>
      resolve(error ? cannotRun(stderr, error) : { ok: true, path: command.file }),
    );
  });
};

let probedSync: BwrapProbe | undefined;

/**
 * `probeBwrap`, blocking, made once per thread: for the MCP worker, which builds a server's
 * transport synchronously (a few milliseconds, the first time a sandboxed server starts).
 */
export const probeBwrapSync = (): BwrapProbe => {
  if (probedSync) return probedSync;
  const command = probeCommand(process.env['PATH'] ?? '');
  if ('ok' in command) return (probedSync = command);
  try {
    execFileSync(command.file, command.args, {
      timeout: 10_000,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    probedSync = { ok: true, path: command.file };
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '');
    probedSync = cannotRun(stderr, error as Error);
  }
  return probedSync;
};

/**
 * The limit a process most likely ended on, as a phrase (`went over its memory limit
 * (limits.memoryMB: 256)`), or undefined when its end says nothing of one. `code` above 128 is
 * read as a signal, as bwrap and shells report it; `stderr` is the end of what it wrote there.
 */
export const limitEnding = (
  limits: ResourceLimits,
  exit: { code: number | null; signal: NodeJS.Signals | null },
  stderr: string,
): string | undefined => {
  const signal = exit.signal ?? (exit.code !== null && exit.code > 128 ? exit.code - 128 : null);
  const named = (name: string) => signal === name || signal === osSignals[name as NodeJS.Signals];
  if (limits.cpuSeconds && (named('SIGXCPU') || named('SIGKILL')))
    return `was ended by its CPU limit (limits.cpuSeconds: ${limits.cpuSeconds})`;
  const outOfMemory =
    /out of memory|MemoryError|Cannot allocate memory|bad_alloc|allocation failed|ENOMEM/i;
  if (limits.memoryMB && (exit.code !== 0 || signal !== null) && outOfMemory.test(stderr))
    return `went over its memory limit (limits.memoryMB: ${limits.memoryMB}) and ended`;
  return undefined;
};
