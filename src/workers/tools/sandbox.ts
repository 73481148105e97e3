import { lstat, realpath } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import type { ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { fail } from './result.ts';

/** `read` may also use the outputs directory; `write` only the workspace and allowed paths. */
export type Access = 'read' | 'write';

/** A path that passed confinement: `real` has no symlink left in it. */
export interface Resolved {
  real: string;
  /** Relative to the workspace root when inside it, else absolute. */
  display: string;
  /** `lstat` of `real`, or null when it does not exist yet. */
  stats: Stats | null;
  /** The real workspace root, which `display` is relative to. */
  root: string;
}

const MAX_PATH = 4096;
const MAX_NAME = 255;

const errorCode = (error: unknown): string | undefined =>
  (error as NodeJS.ErrnoException | undefined)?.code;

/** Real path of `file`, or of its nearest existing ancestor joined with the missing rest. */
const realOrNearest = async (file: string): Promise<string | { refused: string }> => {
  const missing: string[] = [];
  let current = file;
  for (;;) {
    try {
      return path.join(await realpath(current), ...missing.reverse());
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ELOOP') return { refused: 'is a symlink loop' };
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      // A component that lstat sees but realpath cannot follow is a dangling symlink: its target
      // may be outside, and writing through it would create the file there.
      const isLink = await lstat(current).then(
        (stats) => stats.isSymbolicLink(),
        () => false,
      );
      if (isLink) return { refused: 'goes through a symlink whose target does not exist' };
      const parent = path.dirname(current);
      if (parent === current) return current;
      missing.push(path.basename(current));
      current = parent;
    }
  }
};

/** True when `child` is `parent` or below it; both absolute and normalized. `parent` may be `/`. */
export const isInside = (child: string, parent: string): boolean =>
  child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);

/**
 * The real directories a call may use for `access`, the workspace root first. Missing ones keep
 * their lexical path.
 */
const allowedRoots = async (context: ToolContext, access: Access): Promise<string[]> => {
  const dirs = [context.root, ...context.allowedPaths];
  if (access === 'read') dirs.push(context.outputsDir);
  const roots = await Promise.all(
    dirs.map(async (dir) => {
      const real = await realOrNearest(path.resolve(dir));
      return typeof real === 'string' ? real : path.resolve(dir);
    }),
  );
  return [...new Set(roots)];
};

const refuse = (input: string, why: string, roots: string[]): ToolResult =>
  fail(
    'outside-workspace',
    `${JSON.stringify(input.slice(0, 200))} ${why}. File tools may only use paths inside: ` +
      `${roots.join(', ')}. Use a path relative to the workspace root.`,
  );

const checkSyntax = (input: string): string | null => {
  if (input.includes('\0')) return 'contains a NUL byte';
  if (input.includes('\\')) return 'contains a backslash; use "/" to separate directories';
  if (input.startsWith('~')) return 'starts with "~", which is not expanded';
  if (input.length > MAX_PATH) return `is longer than ${MAX_PATH} characters`;
  if (input.split('/').some((part) => Buffer.byteLength(part) > MAX_NAME))
    return `has a name longer than ${MAX_NAME} bytes`;
  return null;
};

/** Display form of a real path: relative to the root when inside it. */
export const displayPath = (real: string, root: string): string =>
  isInside(real, root) ? path.relative(root, real) || '.' : real;

/** Why `stats` may not be used (device, FIFO, socket, hard link), or null when it may. */
const checkStats = (stats: Stats | null): string | null => {
  if (stats && !stats.isFile() && !stats.isDirectory()) return 'is a device file, FIFO or socket';
  if (stats?.isFile() && stats.nlink > 1)
    return `is a hard link (${stats.nlink} links) that may share its content with a file elsewhere`;
  return null;
};

/**
 * Resolves `input` (relative to the root, or absolute) and checks it after resolving symlinks —
 * for a new file, through its nearest existing ancestor. Refuses device files, FIFOs and sockets,
 * and files with several hard links (another link may be outside). Returns a `ToolResult` to hand
 * back to the model when refused.
 */
export const resolvePath = async (
  input: string,
  context: ToolContext,
  access: Access,
): Promise<Resolved | ToolResult> => {
  const roots = await allowedRoots(context, access);
  const syntax = checkSyntax(input);
  if (syntax) return refuse(input, syntax, roots);
  const real = await realOrNearest(path.resolve(context.root, input || '.'));
  if (typeof real !== 'string') return refuse(input, real.refused, roots);
  if (!roots.some((root) => isInside(real, root)))
    return refuse(input, `resolves to ${real}, outside the allowed directories`, roots);
  const stats = await lstatIfExists(real);
  const refused = checkStats(stats);
  if (refused) return refuse(input, refused, roots);
  const root = roots[0] ?? context.root;
  return { real, display: displayPath(real, root), stats, root };
};

/** `lstat` of `file`, or null when it does not exist; other errors are thrown. */
export const lstatIfExists = (file: string): Promise<Stats | null> =>
  lstat(file).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return null;
    throw error;
  });

/**
 * What `resolvePath(input)` returns, worked out from `dir` — the resolved `path.dirname(input)` —
 * and `stats`, the `lstatIfExists` of `input`'s last name in `dir.real`, without resolving again.
 * Undefined when it cannot be told that way (a symlink, a `.` or `..` name, an unknown `stats`, a
 * path `resolvePath` would refuse): call `resolvePath` then.
 */
export const resolveEntry = (
  input: string,
  dir: Resolved,
  stats: Stats | null | undefined,
): Resolved | undefined => {
  const name = path.basename(input);
  if (name === '' || name === '.' || name === '..' || stats === undefined) return undefined;
  if (stats?.isSymbolicLink() || checkSyntax(input) || checkStats(stats)) return undefined;
  // `dir.real` is inside a root and has no symlink left; a name that is no symlink keeps it so.
  const real = path.join(dir.real, name);
  return { real, display: displayPath(real, dir.root), stats, root: dir.root };
};

/** True when `value` is a refusal rather than a resolved path. */
export const isRefused = (value: Resolved | ToolResult): value is ToolResult => 'ok' in value;
