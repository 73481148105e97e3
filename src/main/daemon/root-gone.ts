import { statSync, type Stats } from 'node:fs';

/** How often a daemon looks whether its repository is still there. */
const ROOT_CHECK_MS = 2_000;

/** The directory at `root` now: its device and inode, or null where there is none. */
const identity = (root: string): Pick<Stats, 'dev' | 'ino'> | null | undefined => {
  try {
    const { dev, ino } = statSync(root);
    return { dev, ino };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Gone (or a file now stands on the way to it); anything else (EIO, EACCES) is not a verdict.
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : undefined;
  }
};

/**
 * Calls `stop` once the repository this daemon serves is gone: its directory removed or moved
 * (a deleted clone or worktree), or another directory in its place (removed and cloned again:
 * the daemon's watchers still look at the old one). Without it the daemon, and every server it
 * runs, would live on until its idle timeout for a repository nobody can use. A stat every
 * `ROOT_CHECK_MS`; returns what ends the looking.
 */
export const stopWhenRootGone = (
  root: string,
  stop: (reason: string) => void,
  everyMs = ROOT_CHECK_MS,
): (() => void) => {
  const first = identity(root);
  if (!first) return () => {};
  const timer = setInterval(() => {
    const now = identity(root);
    if (now === undefined) return;
    if (now === null) stop(`the repository ${root} is gone`);
    else if (now.dev !== first.dev || now.ino !== first.ino)
      stop(`the repository ${root} was replaced by another directory`);
    else return;
    clearInterval(timer);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
};
