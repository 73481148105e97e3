import { chmodSync, existsSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Environment variables as read by niffler; tests pass their own object. */
export type Env = Record<string, string | undefined>;

/** `$NIFFLER_HOME`, else `~/.niffler`. The only caller of `os.homedir()`. */
export const nifflerHome = (env: Env = process.env): string =>
  path.resolve(env['NIFFLER_HOME'] ?? path.join(env['HOME'] ?? os.homedir(), '.niffler'));

/**
 * A cache of niffler's own under `$NIFFLER_HOME/cache/`: `code` (V8 code caches of the bundles,
 * main/code-cache.ts), `compile` (Node's compile cache of the ES bundles), `parses` (the config
 * commands' parse memo). Private like the rest of the home: code read from them runs as its user.
 */
export const cacheDir = (kind: 'code' | 'compile' | 'parses', env: Env = process.env): string =>
  path.join(nifflerHome(env), 'cache', kind);

/** Environment variables holding paths: a relative one is taken from the invoking directory. */
const PATH_VARIABLES = ['NIFFLER_HOME', 'NIFFLER_MCP_CONFIG'];

/**
 * Makes the path variables of `env` absolute against `cwd`, in place, so a daemon started from
 * elsewhere reads the same files as the command that started it.
 */
export const absolutizePathVariables = (env: Env = process.env, cwd = process.cwd()): void => {
  for (const name of PATH_VARIABLES) {
    const value = env[name];
    if (value && !path.isAbsolute(value)) env[name] = path.resolve(cwd, value);
  }
};

/**
 * Why `$NIFFLER_HOME` may not be used, or null when it may. It is created 0700 when missing; one
 * that is niffler's but readable by others is tightened to 0700. It is refused when another user
 * owns it or others may write it: files there (code cache, trust, sessions, sockets) are trusted,
 * and a planted one would run as you. (Skipped where there are no uids, as on Windows.)
 */
export const homeProblem = (env: Env = process.env): string | null => {
  const home = nifflerHome(env);
  if (!process.getuid) return null;
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const stats = statSync(home);
    const uid = process.getuid();
    const mode = `0${(stats.mode & 0o777).toString(8)}`;
    if (!stats.isDirectory())
      return `${home} ($NIFFLER_HOME) is not a directory; remove it or set NIFFLER_HOME to a directory of yours`;
    if (stats.uid !== uid)
      return (
        `${home} ($NIFFLER_HOME) belongs to uid ${stats.uid}, not to you (uid ${uid}); niffler runs ` +
        'code and trusts files from there. Use a directory of your own: set NIFFLER_HOME, or unset it for ~/.niffler'
      );
    if (stats.mode & 0o022)
      return (
        `${home} ($NIFFLER_HOME) may be written by others (mode ${mode}), who could plant files niffler ` +
        `trusts; make it yours alone: chmod 700 ${home}`
      );
    if (stats.mode & 0o077) chmodSync(home, 0o700);
    return null;
  } catch (error) {
    return `${home} ($NIFFLER_HOME) cannot be used: ${(error as Error).message}`;
  }
};

/** Where credentials usually live under the home directory: hidden from sandboxed commands. */
const SECRET_HOME_PATHS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.config/gcloud',
  '.config/gh',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.cargo/credentials.toml',
  '.password-store',
  '.local/share/keyrings',
];

/**
 * What a sandboxed command never sees: `$NIFFLER_HOME`, the usual credential files and
 * directories of the home directory, the user's runtime directory (agent and bus sockets) and
 * the Docker socket. Missing ones are skipped when the sandbox is set up.
 */
export const hiddenFromSandbox = (env: Env = process.env): string[] => {
  const home = env['HOME'] ?? os.homedir();
  const runtime =
    env['XDG_RUNTIME_DIR'] ?? (process.getuid ? `/run/user/${process.getuid()}` : undefined);
  return [
    nifflerHome(env),
    ...SECRET_HOME_PATHS.map((entry) => path.join(home, entry)),
    ...(runtime ? [runtime] : []),
    '/run/docker.sock',
    '/var/run/docker.sock',
  ];
};

/** `~` and `~/…` in a configured path, expanded to the home directory. */
export const expandHome = (dir: string, env: Env = process.env): string =>
  dir === '~' || dir.startsWith('~/') ? path.join(env['HOME'] ?? os.homedir(), dir.slice(1)) : dir;

/** Collapses the home directory to `~` for display. */
export const tildify = (file: string, env: Env = process.env): string => {
  const home = env['HOME'] ?? os.homedir();
  return home && (file === home || file.startsWith(home + path.sep))
    ? '~' + file.slice(home.length)
    : file;
};

export interface Workspace {
  /** The directory that holds `.git`, else the directory niffler was started in. */
  root: string;
  /** True when `root` was found by a `.git` directory or file. */
  isGitRepo: boolean;
  /** Directories from `cwd` up to `root`, nearest first. */
  searched: string[];
}

const realpath = (dir: string): string => {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
};

/**
 * Finds the workspace root: the nearest ancestor of `cwd` holding `.git` (a directory, or a file as
 * in worktrees and submodules). Never walks past it; falls back to `cwd` itself.
 */
export const findWorkspace = (cwd: string = process.cwd()): Workspace => {
  const start = realpath(cwd);
  const searched: string[] = [];
  let dir = start;
  for (;;) {
    searched.push(dir);
    if (existsSync(path.join(dir, '.git'))) return { root: dir, isGitRepo: true, searched };
    const parent = path.dirname(dir);
    if (parent === dir) return { root: start, isGitRepo: false, searched: [start] };
    dir = parent;
  }
};

/** Short stable id of a workspace root: `<basename>-<hash>`, safe as a file name. */
const workspaceKey = (root: string): string => {
  const base =
    path
      .basename(root)
      .replace(/[^a-zA-Z0-9._-]/g, '_')
      .slice(0, 24) || 'root';
  return `${base}-${shortHash(root)}`;
};

/** `length` hex characters of a 64-bit FNV-1a hash of `text`. */
export const shortHash = (text: string, length = 12): string => {
  // FNV-1a, 64-bit, on the UTF-16 code units. Not cryptographic (names a socket and a directory,
  // nothing secret), and it spares every command loading node:crypto (~3 ms of start-up).
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++)
    hash = BigInt.asUintN(64, (hash ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n);
  return hash.toString(16).padStart(16, '0').slice(0, length);
};

/** Every file and directory niffler uses, derived from `NIFFLER_HOME` and a workspace root. */
export const nifflerPaths = (root: string, env: Env = process.env) => {
  const home = nifflerHome(env);
  const key = workspaceKey(root);
  return {
    home,
    key,
    globalConfig: path.join(home, 'config.yaml'),
    trustFile: path.join(home, 'trust.json'),
    approvalsFile: path.join(home, 'approvals.json'),
    runDir: path.join(home, 'run'),
    // Unix socket paths are limited to ~104 bytes: keyed by a short hash, not the root's name.
    socket: path.join(home, 'run', `${shortHash(root)}.sock`),
    lock: path.join(home, 'run', `${shortHash(root)}.lock`),
    /** The running daemon's pid and start time (what `daemon stop --force` ends). */
    pidFile: path.join(home, 'run', `${shortHash(root)}.pid`),
    /** One record per server process group the daemon started (what a successor reaps). */
    serversDir: path.join(home, 'run', `${shortHash(root)}.servers`),
    logsDir: path.join(home, 'logs'),
    daemonLog: path.join(home, 'logs', `daemon-${key}.log`),
    mcpLogsDir: path.join(home, 'logs', 'mcp', key),
    sessionsDir: path.join(home, 'sessions', key),
    outputsDir: path.join(home, 'outputs', key),
    /** The private object store of this workspace's undo snapshots. */
    snapshotsDir: path.join(home, 'snapshots', key),
    authDir: path.join(home, 'auth'),
    /** The gateway's bearer token for `niffler mcp serve --http` in this workspace (0600). */
    gatewayTokenFile: path.join(home, 'gateway', `${key}.token`),
    /** Which protocol era each MCP server definition speaks (see negotiation.ts). */
    protocolsFile: path.join(home, 'mcp', 'protocols.json'),
    /** Each MCP server's last catalog, for the next cold start (see kept-catalog.ts). */
    catalogsDir: path.join(home, 'mcp', 'catalogs', key),
    repoConfigDir: path.join(root, '.niffler'),
    repoConfig: path.join(root, '.niffler', 'config.yaml'),
    mcpJson: path.join(root, '.mcp.json'),
  };
};

export type NifflerPaths = ReturnType<typeof nifflerPaths>;

/** niffler's own install directory (holds package.json and .niffler.example/), from src or dist. */
export const packageDir = (): string => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (
      existsSync(path.join(dir, 'package.json')) &&
      existsSync(path.join(dir, '.niffler.example'))
    )
      return dir;
    dir = path.dirname(dir);
  }
  return process.cwd();
};
