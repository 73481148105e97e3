import { cpSync, rmSync } from 'node:fs';
import { execa } from 'execa';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** The built binary; `npm test` builds it first (pretest). */
export const CLI = path.resolve('dist/cli.cjs');

/**
 * A copy of the build under `node_modules/.cache/<name>` (inside the project, so its external
 * packages resolve), removed when the test finishes; returns the copy's bin.
 */
export const copyBuild = (name: string): string => {
  const copy = path.resolve('node_modules/.cache', name);
  rmSync(copy, { recursive: true, force: true });
  cpSync(path.dirname(CLI), copy, { recursive: true });
  onTestFinished(() => rmSync(copy, { recursive: true, force: true }));
  return path.join(copy, path.basename(CLI));
};

/** Runs `niffler ARGS` as a user would (the built bundle, or `bin`, on this Node), never throwing. */
export const niffler = async (
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    input?: string;
    bin?: string;
    /** Killed (SIGKILL) after this long: a command that hangs fails its test instead of stalling it. */
    timeoutMs?: number;
  },
): Promise<{ stdout: string; stderr: string; exitCode: number }> => {
  const result = await execa(process.execPath, [options.bin ?? CLI, ...args], {
    reject: false,
    cwd: options.cwd,
    ...(options.timeoutMs ? { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const } : {}),
    env: options.env,
    extendEnv: false,
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
  });
  return {
    stdout: String(result.stdout),
    stderr: String(result.stderr),
    exitCode: result.exitCode ?? 1,
  };
};
