import type { McpServerSpec } from '../protocol/mcp.ts';
import { safeEnvironment } from '../shared/environment.ts';
import {
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
export interface ServerLaunch extends Launch {
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
  // Its working directory stays visible even under the sandbox's private /tmp.
  const policy = { ...spec.sandbox, read: [...(spec.sandbox.read ?? []), cwd] };
  return { ...inSandbox(base, probe.path, policy, cwd), env, ...explain };
};
