import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { isExecutableFile } from './executable.ts';

// Node cannot set a child's parent-death signal (prctl PR_SET_PDEATHSIG) itself; util-linux's
// setpriv can, and then execs the command, so the server keeps its pid, its exit code and its
// process group. Linux sends the signal when the thread that started the child ends: the MCP
// worker, or the whole daemon when it is killed with -9.

const SYSTEM_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

let setpriv: string | null | undefined;

/** A setpriv that takes `--pdeathsig` (util-linux ≥ 2.33), from the system directories only. */
const findSetpriv = (): string | null => {
  if (setpriv !== undefined) return setpriv;
  setpriv = null;
  if (process.platform !== 'linux') return null;
  const file = SYSTEM_DIRS.map((dir) => path.join(dir, 'setpriv')).find(isExecutableFile);
  if (!file) return null;
  const probe = spawnSync(file, ['--pdeathsig', 'KILL', '--', '/bin/sh', '-c', ':'], {
    stdio: 'ignore',
    timeout: 5_000,
  });
  if (probe.status === 0) setpriv = file;
  return setpriv;
};

/**
 * Finds setpriv now (a probe run, ~2-3 ms), rather than at the first server's spawn: for a thread
 * that is otherwise waiting (the MCP worker before its data comes).
 */
export const prepareParentDeath = (): void => void findSetpriv();

/** Where `command` runs from: a path (relative to `cwd`), or the first match on `PATH`. */
const resolveCommand = (command: string, pathVar: string | undefined, cwd: string) => {
  if (command.includes('/')) {
    const file = path.resolve(cwd, command);
    return isExecutableFile(file) ? file : null;
  }
  for (const dir of (pathVar ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.resolve(cwd, dir, command);
    if (isExecutableFile(file)) return file;
  }
  return null;
};

/**
 * `argv` run under `setpriv --pdeathsig KILL` where the system has it, so the server dies with the
 * thread that started it; `argv` unchanged elsewhere, and for a command that cannot be found (the
 * spawn then reports it as ENOENT, as without the wrapper).
 */
export const parentDeathWrapper = (
  argv: [string, ...string[]],
  pathVar: string | undefined,
  cwd: string,
): string[] => {
  const wrapper = findSetpriv();
  if (!wrapper) return argv;
  const file = resolveCommand(argv[0], pathVar, cwd);
  return file ? [wrapper, '--pdeathsig', 'KILL', '--', file, ...argv.slice(1)] : argv;
};
