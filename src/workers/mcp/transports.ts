import path from 'node:path';
import {
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type FetchLike,
  type Transport,
} from '@modelcontextprotocol/client';
import type { McpServerSpec, McpTransportKind } from '../protocol/mcp.ts';
import { keepProgressInOrder } from './in-order.ts';
import { fetchWithOwnSignal } from '../shared/own-signal-fetch.ts';
import { ProcessTransport, type ProcessExit } from './process-transport.ts';
import { serverLaunch } from './server-launch.ts';
import { WebSocketClientTransport } from './ws-transport.ts';

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

/**
 * The fetch of an HTTP or SSE transport: the server's own (OAuth) or plain, each request on an
 * abort signal of its own — the SDK hands its transport's lifetime signal to every request, on
 * which undici would leave a listener per request until a GC (see own-signal-fetch.ts).
 */
const transportFetch = (hooks: TransportHooks): FetchLike =>
  fetchWithOwnSignal(hooks.fetch ?? fetch);

const requestInit = (spec: McpServerSpec): RequestInit | undefined =>
  spec.headers && Object.keys(spec.headers).length > 0 ? { headers: spec.headers } : undefined;

/**
 * A server process as the SDK's `Client` sees it. The SDK tells stdio from HTTP by a `stderr` and
 * a `pid` on the transport: on stdio a probe that goes unanswered means a 2025-era server (some
 * never answer a request before `initialize`), and no `x-mcp-header` applies. Its stderr is ours.
 */
class StdioTransport extends ProcessTransport {
  readonly stderr = null;
  /** Closed by us while the process still ran (the SDK closes one whose negotiation failed). */
  closing = false;

  override close(): Promise<void> {
    if (this.exit === undefined) this.closing = true;
    return super.close();
  }
}

/** How the server process ended, when it ended by itself (not closed by us). */
export const exitedByItself = (transport: Transport | undefined): ProcessExit | undefined =>
  transport instanceof StdioTransport && !transport.closing ? transport.exit : undefined;

/** The server process of a stdio server (it leads its own process group, see ProcessTransport). */
export const isProcess = (
  transport: Transport | undefined,
): transport is Transport & ProcessTransport => transport instanceof ProcessTransport;

/**
 * Builds the transport for one connection attempt. `kind` is the spec's transport, or `sse`
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
      return new StdioTransport({
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
        fetch: transportFetch(hooks),
      });
    }
    case 'sse': {
      const init = requestInit(spec);
      return new SSEClientTransport(new URL(requireUrl(spec)), {
        ...(init ? { requestInit: init } : {}),
        fetch: transportFetch(hooks),
      });
    }
    case 'ws':
      return new WebSocketClientTransport(toWebSocketUrl(requireUrl(spec)), {
        ...(spec.headers ? { headers: spec.headers } : {}),
        onNoise: hooks.onNoise,
      });
  }
};

const requireUrl = (spec: McpServerSpec): string => {
  if (!spec.url) throw new Error(`server "${spec.name}" has no url`);
  return spec.url;
};

/** The HTTP status a failed request carries, on either HTTP transport's error. */
const httpStatusOf = (error: unknown): number | undefined => {
  if (error instanceof SdkHttpError) return error.status;
  // The SSE transport's SseError keeps the status on a numeric `code`.
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
};

/** True when a failed Streamable HTTP connect means "this server speaks the old SSE transport". */
export const shouldFallBackToSse = (error: unknown): boolean => {
  for (let e = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const status = httpStatusOf(e);
    if (status !== undefined)
      return status >= 400 && status < 500 && status !== 401 && status !== 403;
  }
  return false;
};
