import { spawn } from 'node:child_process';
import type { McpServerStatus } from '../../main/protocol.ts';
import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { info, paint, print, printJson } from '../render/output.ts';

// `niffler mcp login NAME` / `niffler mcp logout NAME`. The OAuth flow runs in the daemon's MCP
// worker (its loopback receiver takes the browser's redirect); this command only shows the URL,
// opens the browser when there is one, and waits. Like mcp-live.ts, it loads neither SDK nor Ink.

/** The command that opens a URL here, or undefined when there is no browser to open. */
const browserCommand = (url: string): [string, string[]] | undefined => {
  const env = process.env;
  if (env['NIFFLER_NO_BROWSER']) return undefined;
  if (env['BROWSER']) return [env['BROWSER'], [url]];
  if (process.platform === 'darwin') return ['open', [url]];
  if (process.platform === 'win32') return ['cmd', ['/c', 'start', '""', url]];
  return env['DISPLAY'] || env['WAYLAND_DISPLAY'] ? ['xdg-open', [url]] : undefined;
};

const openBrowser = (url: string): boolean => {
  const command = browserCommand(url);
  if (!command) return false;
  const child = spawn(command[0], command[1], { detached: true, stdio: 'ignore' });
  child.on('error', () => {}); // no browser after all: the URL is on screen
  child.unref();
  return true;
};

/** `niffler mcp login NAME [--no-browser]`: authorizes a remote server and waits until it is ready. */
export const mcpLogin = (
  name: string,
  options: GlobalOptions & { browser?: boolean },
): Promise<void> =>
  withEngine(options, async (client) => {
    const say = options.json ? info : print;
    const shown = new Set<string>();
    const show = (status: McpServerStatus) => {
      if (status.name !== name || !status.authUrl || shown.has(status.authUrl)) return;
      shown.add(status.authUrl);
      say(`To authorize ${name}, open this URL in a browser:\n\n  ${status.authUrl}\n`);
      const opened =
        options.browser !== false && process.stdout.isTTY && openBrowser(status.authUrl);
      say(opened ? 'Opened it in your browser; waiting…' : 'Waiting for the authorization…');
    };
    const off = client.onNotification('mcp/status-changed', show);
    const controller = new AbortController();
    const onSigint = () => controller.abort();
    process.once('SIGINT', onSigint);
    try {
      const current = (await client.request('mcp/status', {})).servers.find((s) => s.name === name);
      if (current) show(current);
      const status = await client.request('mcp/login', { name }, controller.signal);
      if (options.json) printJson(status);
      else if (status.state === 'ready')
        print(
          `${paint('green', '✓', process.stdout)} ${name} is authorized and ready (${status.tools} tools)`,
        );
      else
        print(
          `${name}: ${status.state}${status.lastError ? ` — ${status.lastError.message}` : ''}`,
        );
      if (status.state !== 'ready') process.exitCode = 1;
    } finally {
      off();
      process.off('SIGINT', onSigint);
    }
  });

/** `niffler mcp logout NAME`: stops the server and deletes its stored tokens and registration. */
export const mcpLogout = (name: string, options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const { status, removed } = await client.request('mcp/logout', { name });
    if (options.json) printJson({ name, removed, state: status.state });
    else
      print(
        removed
          ? `Logged out of ${name}: its tokens and client registration are deleted and the server is stopped; niffler mcp login ${name} signs in again.`
          : `${name} had no stored authorization; the server is stopped.`,
      );
  });
