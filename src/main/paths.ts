import { existsSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Environment variables as read by niffler; tests pass their own object. */
export type Env = Record<string, string | undefined>;

/** `$NIFFLER_HOME`, else `~/.niffler`. The only caller of `os.homedir()`. */
export const nifflerHome = (env: Env = process.env): string =>
  path.resolve(env['NIFFLER_HOME'] ?? path.join(env['HOME'] ?? os.homedir(), '.niffler'));

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
export const workspaceKey = (root: string): string => {
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
    logsDir: path.join(home, 'logs'),
    daemonLog: path.join(home, 'logs', `daemon-${key}.log`),
    mcpLogsDir: path.join(home, 'logs', 'mcp', key),
    sessionsDir: path.join(home, 'sessions', key),
    outputsDir: path.join(home, 'outputs', key),
    authDir: path.join(home, 'auth'),
    /** Which protocol era each MCP server definition speaks (see negotiation.ts). */
    protocolsFile: path.join(home, 'mcp', 'protocols.json'),
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
