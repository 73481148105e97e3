import { lstat, realpath } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import type { ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { realDirs } from '../shared/bounded-read.ts';
import {
  checkKind,
  checkPlace,
  ConfinedError,
  isInside,
  type ConfinePolicy,
} from '../shared/confine.ts';
import { openConfinedFile, type OpenedFile } from '../shared/confined-open.ts';
import { gitPlaces } from '../shared/git-places.ts';
import { fail } from './result.ts';

export { isInside } from '../shared/confine.ts';

/**
 * `read` may also use the outputs directory and the read-only paths (active skills of yours);
 * `write` only the workspace and allowed paths.
 */
type Access = 'read' | 'write';

/** A path that passed confinement: `real` has no symlink left in it. */
export interface Resolved {
  real: string;
  /** Relative to the workspace root when inside it, else absolute. */
  display: string;
  /** `lstat` of `real`, or null when it does not exist yet. */
  stats: Stats | null;
  /** The real workspace root, which `display` is relative to. */
  root: string;
  /** What the path was checked against: every open of it checks its descriptor against this. */
  policy: ConfinePolicy;
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

/**
 * The real directories a call may use for `access`, the workspace root first. Missing ones keep
 * their lexical path.
 */
const allowedRoots = async (context: ToolContext, access: Access): Promise<string[]> => {
  const dirs = [context.root, ...context.allowedPaths];
  if (access === 'read') dirs.push(context.outputsDir, ...(context.readOnlyPaths ?? []));
  const roots = await Promise.all(
    dirs.map(async (dir) => {
      const real = await realOrNearest(path.resolve(dir));
      return typeof real === 'string' ? real : path.resolve(dir);
    }),
  );
  return [...new Set(roots)];
};

/**
 * The confinement of a call: its allowed roots, `$NIFFLER_HOME` (`context.excluded`) out of bounds
 * except, for reading, the outputs directory and read-only paths (`$NIFFLER_HOME/skills/pdf`).
 */
const policyFor = (context: ToolContext, access: Access, roots: string[]): ConfinePolicy => ({
  roots,
  excluded: realDirs(context.excluded),
  exempt:
    access === 'read' ? realDirs([context.outputsDir, ...(context.readOnlyPaths ?? [])]) : [],
});

const refuse = (input: string, why: string, roots: readonly string[]): ToolResult =>
  fail(
    'outside-workspace',
    `${JSON.stringify(input.slice(0, 200))} ${why}. File tools may only use paths inside: ` +
      `${roots.join(', ')}. Use a path relative to the workspace root.`,
  );

/**
 * A `ConfinedError` met while opening `target` as the result the model reads; anything else is
 * thrown on (the worker makes it an `internal` result).
 */
export const refusal = (error: unknown, target: Resolved): ToolResult => {
  if (!(error instanceof ConfinedError)) throw error;
  switch (error.code) {
    case 'not-found':
      return fail('not-found', `${target.display} does not exist (any more)`);
    case 'too-large':
      return fail('too-large', error.message);
    case 'is-directory':
      return fail('invalid-args', `${target.display} is a directory; use list_dir to see it`);
    case 'outside':
      return refuse(
        target.display,
        `resolves to ${error.real ?? '?'}, outside the allowed directories`,
        target.policy.roots ?? [],
      );
    default:
      return refuse(target.display, error.reason, target.policy.roots ?? []);
  }
};

/** Opens a resolved regular file for reading, its descriptor checked again; or the refusal. */
export const openResolved = (target: Resolved): OpenedFile | ToolResult => {
  try {
    return openConfinedFile(target.real, target.policy, { shown: target.display });
  } catch (error) {
    return refusal(error, target);
  }
};

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
const checkStats = (stats: Stats | null): string | null =>
  (stats && checkKind('', stats, { roots: [] })?.reason) ?? null;

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
  const policy = policyFor(context, access, roots);
  const place = checkPlace('', real, policy);
  if (place?.code === 'outside')
    return refuse(input, `resolves to ${real}, outside the allowed directories`, roots);
  if (place) return refuse(input, place.reason, roots);
  if (access === 'write') {
    const git = gitPlaceOf(path.resolve(context.root, input || '.'), real, context.root);
    if (git) return git;
  }
  const stats = await lstatIfExists(real);
  const refused = checkStats(stats);
  if (refused) return refuse(input, refused, roots);
  const root = roots[0] ?? context.root;
  return { real, display: displayPath(real, root), stats, root, policy };
};

/**
 * A write into git's places — any `.git` (as written, or once resolved), or what the workspace's
 * `.git` leads to (`gitPlaces`: a gitdir, a common dir) — refused: git runs their config and
 * hooks on the user's next git command. Undefined for any other path.
 */
const gitPlaceOf = (lexical: string, real: string, root: string): ToolResult | undefined => {
  const named = [lexical, real].some((p) => p.split(path.sep).includes('.git'));
  const places = named ? [] : gitPlaces(root).readOnly;
  if (!named && !places.some((place) => isInside(real, place))) return undefined;
  return fail(
    'denied',
    `${displayPath(real, root)} is git's own state (.git: its config and hooks run code on your next git command); niffler's file tools never write there. Use git for it (a bash call of its own, which asks the user).`,
  );
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
  return { real, display: displayPath(real, dir.root), stats, root: dir.root, policy: dir.policy };
};

/** True when `value` is a refusal rather than a resolved path or an opened file. */
export const isRefused = <T extends object>(value: T | ToolResult): value is ToolResult =>
  'ok' in value;
