import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServerSpec } from '../protocol/mcp.ts';
import { isInside } from '../shared/confine.ts';
import { safeEnvironment } from '../shared/environment.ts';
import {
  findExecutable,
  inSandbox,
  limitEnding,
  probeBwrapSync,
  withLimits,
  type Launch,
} from '../shared/sandbox-command.ts';

/** How the process ended, once it has. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The limit it ended on, as a phrase: `went over its memory limit (…) and ended`. */
  limit?: string;
}

/** How a stdio server is spawned: the command (limited, maybe sandboxed) and its environment. */
interface ServerLaunch extends Launch {
  env: Record<string, string>;
  /** Names the limit an exit was caused by, for the server's last error. */
  explainExit: (exit: ProcessExit) => string | undefined;
}

/** Keeps the last 4 KiB of a server's stderr, where a runtime says it ran out of memory. */
const stderrTail = () => {
  let tail = '';
  return {
    add: (text: string) => (tail = (tail + text).slice(-4096)),
    read: () => tail,
  };
};

/** What bubblewrap gives the sandbox in place of the host's: an empty, private directory. */
const PRIVATE_TMP = '/tmp';

/** A path an argument names: a file URL (`--import file:///…`), or one with a slash, from `cwd`. */
const namedPath = (arg: string, cwd: string): string | undefined => {
  if (arg.startsWith('file://'))
    try {
      return fileURLToPath(arg);
    } catch {
      return undefined;
    }
  return arg.includes('/') && !arg.startsWith('-') ? path.resolve(cwd, arg) : undefined;
};

/**
 * The project a program's file belongs to: the directory holding the first `node_modules` on its
 * path (what it loads sits beside it there), else the nearest directory with a `package.json`,
 * else its own directory.
 */
const projectOf = (file: string): string => {
  const parts = file.split(path.sep);
  const modules = parts.indexOf('node_modules');
  if (modules > 0) return parts.slice(0, modules).join(path.sep) || path.sep;
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir))
    if (existsSync(path.join(dir, 'package.json'))) return dir;
  return path.dirname(file);
};

/**
 * The server's own files that the sandbox's private /tmp would take away: the projects of its
 * command and of each argument naming an existing file under /tmp (a server installed or checked
 * out there). Kept readable, never writable; never /tmp itself, nor a project inside a hidden
 * path. Only what the server's definition names: nothing else of the host's /tmp shows.
 */
export const ownFilesUnderTmp = (
  argv: readonly string[],
  cwd: string,
  hidden: readonly string[],
  searchPath: string | undefined,
): string[] => {
  const [command, ...args] = argv;
  const files = [
    command && !command.includes('/') ? findExecutable(command, searchPath ?? '') : command,
    ...args.map((arg) => namedPath(arg, cwd)),
  ];
  const projects = new Set<string>();
  for (const file of files) {
    if (!file || !isInside(file, PRIVATE_TMP) || !existsSync(file)) continue;
    const project = projectOf(path.resolve(cwd, file));
    if (project === PRIVATE_TMP || !isInside(project, PRIVATE_TMP)) continue;
    if (hidden.some((entry) => isInside(project, entry))) continue;
    projects.add(project);
  }
  return [...projects];
};

/**
 * The launch of a stdio server: a minimal environment plus its `env`; its `limits` set by
 * `ulimit`; and, with `sandbox`, bubblewrap (a server that asks for a sandbox where bwrap cannot
 * run fails to start, saying why, rather than running unconfined). `onStderr` is wrapped to
 * keep what the exit explanation reads.
 */
export const serverLaunch = (
  spec: McpServerSpec & { command: string },
  cwd: string,
  onStderr: (text: string) => void,
): ServerLaunch & { onStderr: (text: string) => void } => {
  const limits = spec.limits ?? {};
  const base = withLimits({ file: spec.command, args: spec.args ?? [] }, limits);
  const env = safeEnvironment({ ...(spec.sandbox ? { TMPDIR: '/tmp' } : {}), ...spec.env });
  const tail = stderrTail();
  const explain = {
    explainExit: (exit: ProcessExit) => limitEnding(limits, exit, tail.read()),
    onStderr: (text: string) => {
      tail.add(text);
      onStderr(text);
    },
  };
  if (!spec.sandbox) return { ...base, env, ...explain };
  const probe = probeBwrapSync();
  if (!probe.ok)
    throw new Error(
      `mcpServers.${spec.name}.sandbox is set, but ${probe.reason}; install bubblewrap ` +
        '(apt install bubblewrap), or remove the sandbox from its entry',
    );
  // Its working directory and its own files stay visible even under the sandbox's private /tmp.
  const own = ownFilesUnderTmp(
    [spec.command, ...(spec.args ?? [])],
    cwd,
    spec.sandbox.hide,
    env['PATH'],
  );
  const policy = { ...spec.sandbox, read: [...(spec.sandbox.read ?? []), cwd, ...own] };
  return { ...inSandbox(base, probe.path, policy, cwd), env, ...explain };
};
