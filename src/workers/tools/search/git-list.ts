import { spawn } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ConfinePolicy } from '../../shared/confine.ts';
import { readIgnoreFile } from './chain.ts';

// The file list of a search inside a git repository, from git itself: the index (tracked files,
// at once) and the untracked files git does not ignore (`--others --exclude-standard`, as git
// walks). Git runs with the repository's code-running settings switched off (an fsmonitor or
// hooks path planted in .git/config must not run on our behalf). Its output is only names: each
// is checked like any other path when a scan opens it.

const SAFE = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '--no-optional-locks',
];

const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
});

/** How a git command ended: its exit code (null: killed or not started) and what it said. */
interface GitEnd {
  code: number | null;
  stderr: string;
}

/** A git command running in `cwd`, its NUL-separated output handed on in batches as it comes. */
export interface GitPaths {
  done: Promise<GitEnd>;
  /** Resolves (true) if git is stuck: blocked opening an ignore file that is a FIFO. */
  stuck: Promise<boolean>;
  stop(): void;
}

const STALL_MS = 1000;
const WATCH_MS = 200;

/** [state, CPU ticks] of a process (Linux), or null when it cannot be read. */
const processState = (pid: number): [string, number] | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [fields[0]!, Number(fields[11]) + Number(fields[12])];
  } catch {
    return null;
  }
};

const waitsOnPipe = (pid: number): boolean => {
  try {
    return /fifo|pipe|partner/i.test(readFileSync(`/proc/${pid}/wchan`, 'utf8'));
  } catch {
    return false;
  }
};

/**
 * Watches git: an ignore file that is a FIFO makes git block opening it for ever (ripgrep, and
 * the walk, refuse such a file). Asleep with no CPU spent for a second, waiting on a pipe: stuck.
 */
const watchStuck = (pid: number | undefined, done: Promise<unknown>): Promise<boolean> =>
  new Promise((resolve) => {
    if (pid === undefined || process.platform !== 'linux') return resolve(false);
    let last = -1;
    let still = 0;
    const timer = setInterval(() => {
      const state = processState(pid);
      if (!state) return;
      const [run, cpu] = state;
      still = run === 'S' && cpu === last ? still + WATCH_MS : 0;
      last = cpu;
      if (still >= STALL_MS && waitsOnPipe(pid)) {
        clearInterval(timer);
        resolve(true);
      }
    }, WATCH_MS);
    timer.unref();
    void done.then(() => {
      clearInterval(timer);
      resolve(false);
    });
  });

/** Runs `git ARGS -z` in `cwd`, calling `onBatch` with each run of whole paths it prints. */
export const gitPaths = (
  cwd: string,
  args: string[],
  onBatch: (paths: string[]) => void,
): GitPaths => {
  const child = spawn('git', [...SAFE, ...args], {
    cwd,
    env: gitEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let rest = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => {
    const parts = (rest + text).split('\0');
    rest = parts.pop() ?? '';
    if (parts.length) onBatch(parts);
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    if (stderr.length < 16_384) stderr += text;
  });
  const done = new Promise<GitEnd>((resolve) => {
    child.once('error', (error) => resolve({ code: null, stderr: error.message }));
    child.once('close', (code) => {
      if (rest) onBatch([rest]);
      resolve({ code, stderr });
    });
  });
  const stuck = watchStuck(child.pid, done);
  void stuck.then((isStuck) => isStuck && child.kill('SIGKILL'));
  return { done, stuck, stop: () => child.kill('SIGKILL') };
};

/** True when a `.git` is in `dir` or a directory above it (metadata only: nothing is read). */
export const hasGitAbove = (dir: string): boolean => {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      lstatSync(path.join(at, '.git'));
      return true;
    } catch {
      // not here
    }
    if (path.dirname(at) === at) return false;
  }
};

/** The value of `excludesFile` in the `[core]` section of a git config text, if set. */
const excludesFileIn = (text: string): string | undefined => {
  let core = false;
  let found: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const section = /^\[\s*([^\]\s"]+)/.exec(line);
    if (section) core = section[1]!.toLowerCase() === 'core';
    else if (core) {
      const entry = /^excludesfile\s*=\s*(.*)$/i.exec(line);
      if (entry) found = entry[1]!.trim().replace(/^"(.*)"$/, '$1');
    }
  }
  return found;
};

/**
 * The text of the user's core.excludesFile, found as ripgrep finds it: set in
 * `$XDG_CONFIG_HOME/git/config` or `~/.gitconfig`, else `$XDG_CONFIG_HOME/git/ignore`. It is the
 * user's own file, read bounded (never in `$NIFFLER_HOME`).
 */
export const globalExcludes = (policy: ConfinePolicy): string => {
  const home = process.env['HOME'];
  if (!home) return '';
  const xdg = process.env['XDG_CONFIG_HOME'] || path.join(home, '.config');
  const own: ConfinePolicy = policy.excluded ? { excluded: policy.excluded } : {};
  let file: string | undefined;
  for (const config of [path.join(xdg, 'git', 'config'), path.join(home, '.gitconfig')])
    file = excludesFileIn(readIgnoreFile(config, own)) ?? file;
  if (file?.startsWith('~/')) file = path.join(home, file.slice(2));
  return readIgnoreFile(file ?? path.join(xdg, 'git', 'ignore'), own);
};
