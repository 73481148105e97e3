import { execa } from 'execa';
import { onTestFinished } from 'vitest';

let sessions = 0;

/** A real terminal (a detached tmux session on its own server) running one command. */
export interface Terminal {
  /** The visible screen as plain text (`tmux capture-pane -p`). */
  screen(): Promise<string>;
  /** Polls the screen until `expected` shows (a string or a test), bounded by `timeoutMs`. */
  waitFor(
    expected: string | RegExp | ((screen: string) => boolean),
    timeoutMs?: number,
  ): Promise<string>;
  /** Types text literally (no key names). */
  type(text: string): Promise<void>;
  /** Presses tmux key names: Enter, Escape, C-d, Up… */
  press(...keys: string[]): Promise<void>;
}

/**
 * Starts `command` in a fresh tmux server sized `width`×`height`, with exactly `env` (plus PATH
 * and TERM). The command's exit status is printed as `[exited N]`; the server is killed on finish.
 */
export const startTerminal = async (options: {
  command: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  width?: number;
  height?: number;
}): Promise<Terminal> => {
  const socket = `nf-e2e-${process.pid}-${++sessions}`;
  // The terminal is this one whatever the caller's environment says: xterm, and not a CI run
  // (Ink draws only the last frame when CI is set).
  const env = Object.fromEntries(
    Object.entries({
      PATH: process.env['PATH'],
      ...options.env,
      TERM: 'xterm-256color',
      CI: undefined,
    }).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const tmux = (...args: string[]) =>
    execa('tmux', ['-L', socket, ...args], { env, extendEnv: false, cwd: options.cwd });
  const quoted = options.command.map((part) => `'${part.replaceAll("'", `'\\''`)}'`).join(' ');
  await tmux(
    '-f',
    '/dev/null',
    'new-session',
    '-d',
    '-s',
    'main',
    '-x',
    String(options.width ?? 100),
    '-y',
    String(options.height ?? 40),
    `${quoted}; echo "[exited $?]"; sleep 600`,
  );
  onTestFinished(async () => {
    await tmux('kill-server').catch(() => undefined);
  });
  const screen = async () => (await tmux('capture-pane', '-p', '-t', 'main')).stdout;
  return {
    screen,
    waitFor: async (expected, timeoutMs = 20_000) => {
      const matches =
        typeof expected === 'function'
          ? expected
          : (text: string) =>
              typeof expected === 'string' ? text.includes(expected) : expected.test(text);
      const deadline = Date.now() + timeoutMs;
      let last: string;
      for (;;) {
        last = await screen();
        if (matches(last)) return last;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${String(expected)}; the screen shows:\n${last}`);
        await new Promise((resolve) => setTimeout(resolve, 50)); // polling interval, not a wait for an outcome
      }
    },
    type: async (text) => {
      await tmux('send-keys', '-t', 'main', '-l', text);
    },
    press: async (...keys) => {
      for (const key of keys) await tmux('send-keys', '-t', 'main', key);
    },
  };
};
