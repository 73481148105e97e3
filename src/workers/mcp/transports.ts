import path from 'node:path';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerSpec, McpTransportKind } from '../protocol/mcp.ts';
import { keepProgressInOrder } from './in-order.ts';
import { ProcessTransport } from './process-transport.ts';
import { serverLaunch } from './server-launch.ts';

/** What a transport reports back to its connection besides JSON-RPC. */
export interface TransportHooks {
  root: string;
  killGraceMs: number;
  /** Where stdio servers' process groups are recorded while they run (see ProcessTransport). */
  serversDir?: string | undefined;
  /** Where a stdio server's long result text goes as it arrives (see ProcessTransport). */
  spill?: { dir: string; keepChars: () => number } | undefined;
  onStderr: (text: string) => void;
  onNoise: (line: string, error: unknown) => void;
  /** The fetch of an OAuth-protected server (`authorizedFetch`); plain `fetch` when absent. */
  fetch?: FetchLike | undefined;
}

/** `http(s)://` → `ws(s)://` for WebSocket servers configured with an HTTP URL. */
export const toWebSocketUrl = (url: string): URL => {
  const parsed = new URL(url);
  if (parsed.protocol === 'http:') parsed.protocol = 'ws:';
  if (parsed.protocol === 'https:') parsed.protocol = 'wss:';
  return parsed;
};

const requestInit = (spec: McpServerSpec): RequestInit | undefined =>
  spec.headers && Object.keys(spec.headers).length > 0 ? { headers: spec.headers } : undefined;

/**
 * Builds the SDK transport for one connection attempt. `kind` is the spec's transport, or `sse`
 * when a Streamable HTTP attempt is falling back.
 */
export const createTransport = (
  spec: McpServerSpec,
  kind: McpTransportKind,
  hooks: TransportHooks,
): Transport => keepProgressInOrder(transportFor(spec, kind, hooks));

const transportFor = (
  spec: McpServerSpec,
  kind: McpTransportKind,
  hooks: TransportHooks,
): Transport => {
  switch (kind) {
    case 'stdio': {
      const { command } = spec;
      if (!command) throw new Error(`server "${spec.name}" has no command`);
      const cwd = path.resolve(hooks.root, spec.workingDir ?? '.');
      const launch = serverLaunch({ ...spec, command }, cwd, hooks.onStderr);
      return new ProcessTransport({
        command: launch.file,
        args: launch.args,
        cwd,
        env: launch.env,
        killGraceMs: hooks.killGraceMs,
        ...(hooks.serversDir ? { record: { dir: hooks.serversDir, label: spec.name } } : {}),
        ...(hooks.spill ? { spill: { ...hooks.spill, label: spec.name } } : {}),
        onRecordError: (error) =>
          hooks.onStderr(`[niffler] could not record the server's process: ${error.message}\n`),
        onStderr: launch.onStderr,
        onNoise: hooks.onNoise,
        explainExit: launch.explainExit,
      });
    }
    case 'http': {
      const init = requestInit(spec);
      return new StreamableHTTPClientTransport(new URL(requireUrl(spec)), {
        ...(init ? { requestInit: init } : {}),
        ...(hooks.fetch ? { fetch: hooks.fetch } : {}),
      });
    }
    case 'sse': {
      const init = requestInit(spec);
      return new SSEClientTransport(new URL(requireUrl(spec)), {
        ...(init ? { requestInit: init } : {}),
        ...(hooks.fetch ? { fetch: hooks.fetch } : {}),
      });
    }
    case 'ws':
      return new WebSocketClientTransport(toWebSocketUrl(requireUrl(spec)));
  }
};

const requireUrl = (spec: McpServerSpec): string => {
  if (!spec.url) throw new Error(`server "${spec.name}" has no url`);
  return spec.url;
};

/** True when a failed Streamable HTTP connect means "this server speaks the old SSE transport". */
export const shouldFallBackToSse = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 400 && code < 500 && code !== 401 && code !== 403;
};
