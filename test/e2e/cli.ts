import { execa } from 'execa';
import path from 'node:path';

/** The built binary; `npm test` builds it first (pretest). */
export const CLI = path.resolve('dist/cli.cjs');

/** Runs `niffler ARGS` as a user would (the built bundle on this Node), never throwing. */
export const niffler = async (
  args: string[],
  options: { cwd: string; env: Record<string, string>; input?: string },
): Promise<{ stdout: string; stderr: string; exitCode: number }> => {
  const result = await execa(process.execPath, [CLI, ...args], {
    reject: false,
    cwd: options.cwd,
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
