import { execFile } from 'node:child_process';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { BwrapProbe, ResourceLimits, SandboxPolicy } from '../protocol/sandbox.ts';
import { isInside } from './confine.ts';

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
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // Not here: the next directory of PATH.
    }
  }
  return null;
};

/** The `ulimit` commands for `limits`, or '' when none is set. */
export const ulimitScript = (limits: ResourceLimits): string => {
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
    args: ['-c', `${script} || ${fail}; exec "$@"`, 'niffler-limits', launch.file, ...launch.args],
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

/** Files inside a writable directory that stay read-only: what git runs later, outside. */
const PROTECTED = ['.git/hooks', '.git/config'];

/**
 * bwrap's arguments for `policy`, up to and including `--`. The order matters: the read-only
 * root, a private /tmp, hidden paths, writable paths, then hidden paths inside writable ones
 * again (a writable workspace under a hidden home stays visible; `$NIFFLER_HOME` inside the
 * workspace stays hidden).
 */
export const bwrapArgs = (policy: SandboxPolicy, cwd: string): string[] => {
  const hidden = existing(policy.hide);
  const writable = existing(policy.write);
  const protect = existing(writable.flatMap((dir) => PROTECTED.map((p) => path.join(dir, p))));
  const reHidden = hidden.filter((entry) => writable.some((dir) => isInside(entry, dir)));
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

/**
 * Finds bwrap on `PATH` and runs `true` in the sandbox niffler sets up (namespaces included), so
 * a bwrap that cannot run here — user namespaces switched off, an AppArmor rule — is found now,
 * with its own words as the reason.
 */
export const probeBwrap = async (searchPath = process.env['PATH'] ?? ''): Promise<BwrapProbe> => {
  if (process.platform !== 'linux')
    return { ok: false, reason: `bubblewrap runs only on Linux (this is ${process.platform})` };
  const file = findExecutable('bwrap', searchPath);
  if (!file) return { ok: false, reason: 'bubblewrap (bwrap) is not installed' };
  const policy: SandboxPolicy = { write: [], hide: [], network: false };
  return new Promise((resolve) => {
    execFile(file, [...bwrapArgs(policy, '/'), 'true'], { timeout: 10_000 }, (error, _out, err) =>
      resolve(
        error
          ? { ok: false, reason: `bwrap cannot run here: ${err.trim() || error.message}` }
          : { ok: true, path: file },
      ),
    );
  });
};
