import { realpathSync } from 'node:fs';
import path from 'node:path';
import { isObject } from '../../workers/shared/is-object.ts';
import { nifflerPaths, tildify, type Env } from '../paths.ts';
import { gitWriteIn, namesGitDir } from './git-writes.ts';

/**
 * The places that make the rules a model runs under, and why each matters: niffler's config in
 * the repository and its own state (a change there must go through `niffler trust` or the user),
 * and git's config, hooks and info (they run code on the user's next git command).
 */
export interface ProtectedPlace {
  path: string;
  /** A directory protects everything below it. */
  dir: boolean;
  why: string;
}

const CONFIG = "this repository's niffler config: a change takes effect only after niffler trust";
const USER_CONFIG = 'your own niffler config: a change applies to every session';
const GIT = "git's config and hooks: they run code on your next git command";

const PEER =
  "this repository's settings for another assistant, which niffler reads: a change takes effect only after niffler trust";

/** Other assistants' files in a repository that niffler reads as config (hooks, servers). */
const PEER_CONFIG = [
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.codex/config.toml',
  '.gemini/settings.json',
  'opencode.json',
];

/** Where niffler's rules live for `root`; `extra` adds files such as NIFFLER_MCP_CONFIG's. */
export const protectedPlaces = (
  root: string,
  env: Env,
  extra: readonly string[] = [],
): ProtectedPlace[] => {
  const paths = nifflerPaths(root, env);
  return [
    { path: paths.repoConfigDir, dir: true, why: CONFIG },
    { path: paths.mcpJson, dir: false, why: CONFIG },
    ...PEER_CONFIG.map((file) => ({ path: path.join(root, file), dir: false, why: PEER })),
    ...extra.map((file) => ({ path: file, dir: false, why: USER_CONFIG })),
    { path: paths.home, dir: true, why: "niffler's own state (trust, approvals, sessions)" },
    { path: path.join(root, '.git'), dir: true, why: GIT },
  ].map((place) => ({ ...place, path: realOrSelf(place.path) }));
};

/** The real path of `file`, or of its nearest existing ancestor joined with the rest. */
const realOrSelf = (file: string): string => {
  const rest: string[] = [];
  for (let at = path.resolve(file); ; at = path.dirname(at)) {
    try {
      return path.join(realpathSync(at), ...rest.reverse());
    } catch {
      if (path.dirname(at) === at) return path.resolve(file);
      rest.push(path.basename(at));
    }
  }
};

const placeOf = (
  file: string,
  root: string,
  places: readonly ProtectedPlace[],
): ProtectedPlace | undefined => {
  const real = realOrSelf(path.resolve(root, file));
  return places.find((p) =>
    p.dir ? real === p.path || real.startsWith(p.path + path.sep) : real === p.path,
  );
};

const PATH_KEYS =
  /^(path|paths|file|files|filename|filepath|source|destination|target|dir|directory|uri)$/i;

/** The strings under path-like keys of an MCP tool's arguments (`file://` URIs included). */
const pathArgs = (args: unknown): string[] =>
  isObject(args)
    ? Object.entries(args).flatMap(([key, value]) => {
        const values = Array.isArray(value) ? value : [value];
        const strings = PATH_KEYS.test(key)
          ? values.filter((v): v is string => typeof v === 'string')
          : [];
        return [
          ...strings.map((s) => (s.startsWith('file://') ? decodeURI(s.slice(7)) : s)),
          ...values.flatMap(pathArgs),
        ];
      })
    : [];

/**
 * Why a shell command visibly touches one of `places`: a git command that writes git's state, a
 * `.git` path it names, or a place of niffler's rules it names. Seeing is not what protects them —
 * inside bash's sandbox they are read-only mounts — it lets niffler ask before, not after.
 */
const shellTouches = (
  command: string,
  places: readonly ProtectedPlace[],
  env: Env,
): Protection | undefined => {
  const git = places.find((p) => p.why === GIT);
  const write = gitWriteIn(command);
  if (git && (write || namesGitDir(command)))
    return {
      why: `${write ? `\`${write}\` writes git's state` : 'this command names .git'} (${GIT}); in bash's sandbox .git is read-only, and the command runs with it writable only once you approve it; it always asks`,
      grant: GIT_WRITE,
    };
  const place = places.find((p) => {
    if (p.why === GIT) return false;
    const names = [p.path, tildify(p.path, env)];
    const base = path.basename(p.path);
    if (base.startsWith('.')) names.push(base);
    return names.some((name) => command.includes(name));
  });
  return place
    ? { why: `this command changes ${tildify(place.path, env)} (${place.why}); it always asks` }
    : undefined;
};

/** What bash may do once the user approves it: write the workspace's `.git`. */
export const GIT_WRITE = 'git-write';

/** Why a call always asks, and what approving it lets the call do that it could not before. */
interface Protection {
  why: string;
  grant?: string;
}

/** A call as the protection check needs it. */
interface CallForCheck {
  name: string;
  args: unknown;
  kind: 'builtin' | 'mcp';
  readOnly: boolean;
}

/**
 * Why a call would change what niffler's rules are made of, if it would: a file tool's path, a
 * bash command that names such a place, or an MCP tool's path arguments. Such a call always asks
 * (see `explainApproval`), with this reason shown. Read-only calls never count.
 */
export const protectedReason = (
  call: CallForCheck,
  root: string,
  places: readonly ProtectedPlace[],
  env: Env,
): Protection | undefined => {
  if (call.readOnly) return undefined;
  const args = isObject(call.args) ? call.args : {};
  if (call.kind === 'builtin' && call.name === 'bash')
    return shellTouches(typeof args['command'] === 'string' ? args['command'] : '', places, env);
  const targets =
    call.kind === 'builtin'
      ? typeof args['path'] === 'string'
        ? [args['path']]
        : []
      : pathArgs(args);
  // git's places are not asked for: the file tools refuse them outright (see tools/sandbox.ts).
  const own = call.kind === 'builtin' ? places.filter((p) => p.why !== GIT) : places;
  for (const target of targets) {
    const place = placeOf(target, root, own);
    if (place)
      return {
        why: `${JSON.stringify(target)} changes ${tildify(place.path, env)} (${place.why}); it always asks`,
      };
  }
  return undefined;
};
