/** Sends `signal` to the whole process group `pgid`; false when the group is gone. */
export const killGroup = (pgid: number, signal: NodeJS.Signals | 0): boolean => {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: every process of the group has exited (and been reaped).
    return false;
  }
};

/** Resolves once no process of group `pgid` is left, checking every 20 ms for `maxMs` at most. */
export const waitGroupGone = async (pgid: number, maxMs = 3000): Promise<boolean> => {
  for (let waited = 0; waited < maxMs; waited += 20) {
    if (!killGroup(pgid, 0)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return !killGroup(pgid, 0);
};
