/**
 * The oldest Node niffler runs on (22.3: `process.getBuiltinModule`, which its lazy loads of
 * node:crypto and node:v8 use); a checkout's npm scripts and npx bring their own (node@22).
 */
export const MIN_NODE = '22.3';

/** Whether Node `version` (`process.versions.node`: `22.2.0`) is older than MIN_NODE. */
export const nodeTooOld = (version: string): boolean => {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [wantMajor = 0, wantMinor = 0] = MIN_NODE.split('.').map(Number);
  return major < wantMajor || (major === wantMajor && minor < wantMinor);
};
