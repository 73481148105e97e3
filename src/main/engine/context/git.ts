import { execFile } from 'node:child_process';

// Git context for the end of the system prompt: branch, upstream, a short status and the last
// commits. Git runs with the repository's code-running settings switched off (an fsmonitor or
// hooks path planted in .git/config must not run on our behalf) and within a time bound.

const MAX_STATUS_LINES = 20;
const TIMEOUT_MS = 2000;

/** Settings that would make `git status` run a program named by the repository's config. */
const SAFE = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '--no-optional-locks',
];

const git = (root: string, args: string[], signal?: AbortSignal): Promise<string | undefined> =>
  new Promise((resolve) => {
    execFile(
      'git',
      [...SAFE, ...args],
      {
        cwd: root,
        timeout: TIMEOUT_MS,
        maxBuffer: 1024 * 1024,
        ...(signal ? { signal } : {}),
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' },
      },
      (error, stdout) => resolve(error ? undefined : stdout),
    );
  });

/** `## main...origin/main [ahead 1, behind 2]` → branch, upstream, ahead/behind. */
const branchLine = (header: string): string => {
  const match = /^## (?:No commits yet on )?([^.\s]+)(?:\.\.\.(\S+))?(?: \[(.*)\])?/.exec(header);
  if (!match) return header.replace(/^## /, '');
  const [, branch, upstream, counts] = match;
  return [
    `Branch: ${branch}`,
    upstream ? `upstream ${upstream}${counts ? ` (${counts})` : ' (up to date)'}` : 'no upstream',
  ].join(', ');
};

/**
 * A few lines about the repository's git state, or undefined where git has nothing to say (no
 * repository, no git, a timeout): the context is simply absent then.
 */
export const gitContext = async (
  root: string,
  signal?: AbortSignal,
): Promise<string | undefined> => {
  const [status, log] = await Promise.all([
    git(root, ['status', '--porcelain=v1', '--branch', '--untracked-files=normal'], signal),
    git(root, ['log', '-5', '--format=%h %s (%cr)'], signal),
  ]);
  if (status === undefined) return undefined;
  const [header = '', ...changes] = status.split('\n').filter(Boolean);
  const lines = [branchLine(header)];
  if (changes.length === 0) lines.push('Working tree clean.');
  else {
    lines.push(
      `Changes (${changes.length}):`,
      ...changes.slice(0, MAX_STATUS_LINES).map((c) => `  ${c}`),
    );
    if (changes.length > MAX_STATUS_LINES)
      lines.push(`  … and ${changes.length - MAX_STATUS_LINES} more (git status shows all)`);
  }
  if (log?.trim())
    lines.push(
      'Recent commits:',
      ...log
        .trim()
        .split('\n')
        .map((l) => `  ${l}`),
    );
  return lines.join('\n');
};
