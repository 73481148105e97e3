import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// `CLAUDE_ENV_FILE`, as Claude Code gives it: a file a session's SessionStart hooks write
// `export NAME=value` lines to (`direnv export bash`, `nvm use` and the like), which the session's
// bash calls read before each command. One directory per daemon process, made private (0700, a
// name no one can guess) in the system's temporary directory: the sandbox keeps $NIFFLER_HOME
// hidden, and a file in it could be neither written by a hook nor read by bash there. It goes
// when the process ends; a session resumed by a later daemon runs its SessionStart hooks again.

let made: string | undefined;

/** This process's directory of session environment files, made on first use. */
const root = (): string => {
  if (made) return made;
  made = mkdtempSync(path.join(os.tmpdir(), 'niffler-env-'));
  const dir = made;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

const safe = (sessionId: string): string =>
  sessionId.replace(/[^a-zA-Z0-9._-]/g, '_').slice(0, 100) || 'default';

/**
 * The environment file of session `sessionId`, when its hooks wrote something to it: what bash
 * reads before each of the session's commands. Undefined when there is none (nothing is made).
 */
export const sessionEnvFile = (sessionId: string | undefined): string | undefined => {
  if (!made || !sessionId) return undefined;
  const file = path.join(made, safe(sessionId), 'env.sh');
  try {
    return statSync(file).size > 0 ? file : undefined;
  } catch {
    return undefined;
  }
};

/** One session's environment file. */
export class SessionEnv {
  constructor(private readonly sessionId: string) {}

  get #dir(): string {
    return path.join(root(), safe(this.sessionId));
  }

  /**
   * A fresh file for this session's SessionStart hooks — a subagent's starts as a copy of its
   * parent's — and what the hooks need for it: `CLAUDE_ENV_FILE`, and its directory writable in
   * the sandbox. Undefined when it cannot be made (the hooks then run without it).
   */
  prepare(parentId?: string): { vars: Record<string, string>; writable: string[] } | undefined {
    try {
      const dir = this.#dir;
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = path.join(dir, 'env.sh');
      const parent = sessionEnvFile(parentId);
      if (parent) copyFileSync(parent, file);
      else writeFileSync(file, '', { mode: 0o600 });
      return { vars: { CLAUDE_ENV_FILE: file }, writable: [dir] };
    } catch {
      return undefined;
    }
  }

  /** Removes the file (the session ended). */
  remove(): void {
    if (made) rmSync(path.join(made, safe(this.sessionId)), { recursive: true, force: true });
  }
}
