const MAX_OUTPUT = 20_000;

/** Runs `!command` in the workspace with the user's shell; output is for the user only. */
export const runShell = async (
  command: string,
  cwd: string,
  signal: AbortSignal,
): Promise<{ output: string; exitCode: number | null }> => {
  const { execa } = await import('execa');
  const result = await execa(command, {
    shell: process.env['SHELL'] ?? true,
    cwd,
    all: true,
    reject: false,
    stdin: 'ignore',
    cancelSignal: signal,
    env: { FORCE_COLOR: '0' },
  });
  const all = String(result.all ?? '');
  const output =
    all.length > MAX_OUTPUT
      ? `${all.slice(0, MAX_OUTPUT)}\n… (${all.length - MAX_OUTPUT} more characters)`
      : all;
  return {
    output: result.isCanceled ? `${output}\n(cancelled)`.trim() : output,
    exitCode: result.exitCode ?? null,
  };
};
