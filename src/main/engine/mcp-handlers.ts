import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { McpServerStatus, McpToolInfo } from '../../workers/protocol/mcp.ts';
import { authFileName } from '../../workers/shared/auth-file.ts';
import type { ResolvedServer } from '../config/load.ts';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { NifflerError } from '../errors.ts';
import type { NifflerPaths } from '../paths.ts';
import type { GatewayConsumerStatus, ParamsOf, RequestContext, ResultOf } from '../protocol.ts';
import { configRules, isConfigured, mcpTool } from './capabilities.ts';
import { waitForServers, type ServersView } from './server-waits.ts';

/** The `mcp/*` requests about the servers themselves, and about what they offer. */
type ServerMethod =
  'mcp/status' | 'mcp/start' | 'mcp/stop' | 'mcp/restart' | 'mcp/login' | 'mcp/logout';
type CatalogMethod =
  | 'mcp/tools'
  | 'mcp/call'
  | 'mcp/prompts'
  | 'mcp/prompt'
  | 'mcp/resources'
  | 'mcp/read'
  | 'mcp/complete'
  | 'mcp/trace';

/** What the `mcp/*` requests need of the engine (the `Engine` is one). */
export interface McpView extends ServersView {
  readonly loaded: LoadedConfig | null;
  readonly configError: string | null;
  readonly paths: Pick<NifflerPaths, 'authDir'>;
  /** The gateway's consumers, which `mcp status` lists. */
  gatewayConsumers(): GatewayConsumerStatus[];
}

type Handlers<M extends ServerMethod | CatalogMethod> = {
  [K in M]: (params: ParamsOf<K>, context: RequestContext) => Promise<ResultOf<K>>;
};

/** A configured, enabled, trusted server by name, or an error that names the next step. */
export const knownServer = (engine: McpView, name: string): ResolvedServer => {
  const server = engine.loaded?.servers.find((s) => s.name === name);
  if (!server) {
    const known = engine.loaded?.servers.map((s) => s.name) ?? [];
    throw new NifflerError(
      'mcp-not-found',
      `no server named "${name}"${known.length ? ` (configured: ${known.join(', ')})` : ''}; add one with niffler mcp add ${name} -- COMMAND`,
    );
  }
  if (server.trust === 'untrusted' || server.trust === 'changed')
    throw new NifflerError(
      'untrusted',
      `server "${name}" is untrusted (from ${server.source.file ?? 'this repository'}); review it with niffler mcp list, then run niffler trust`,
    );
  if (!server.enabled)
    throw new NifflerError(
      'mcp-not-found',
      `server "${name}" is disabled in the config; set enabled: true to use it`,
    );
  return server;
};

/**
 * The `instructions` of the ready servers the user trusts (their own, or a trusted repository's),
 * for the system prompt: a server's instructions are text from outside, given to the model only
 * where the user decided to run that server.
 */
export const serverInstructions = (
  statuses: McpServerStatus[],
  servers: ResolvedServer[],
): { server: string; text: string }[] =>
  statuses.flatMap((status) => {
    const server = servers.find((s) => s.name === status.name);
    const trusted =
      server && server.enabled && (server.trust === 'yours' || server.trust === 'trusted');
    // A server still starting offers the instructions kept from its last run with its tools.
    const offered =
      status.state === 'ready' || (status.state === 'starting' && status.catalog === 'kept');
    if (!trusted || !offered || !status.instructions?.trim()) return [];
    return [{ server: status.name, text: status.instructions }];
  });

/** The MCP worker's OAuth file of a server URL (what `niffler mcp logout` removes). */
export const authFileOf = (authDir: string, url: string): string =>
  path.join(authDir, authFileName(url));

/** A known server that OAuth applies to (Streamable HTTP or SSE), or an error saying why not. */
const remoteServer = (engine: McpView, name: string): ResolvedServer & { url: string } => {
  const server = knownServer(engine, name);
  const url = server.definition.url;
  if (!url || (server.transport !== 'http' && server.transport !== 'sse'))
    throw new NifflerError(
      'usage',
      `server "${name}" uses ${server.transport}; OAuth login is for remote (http or sse) servers`,
    );
  return { ...server, url };
};

/**
 * Starts (or restarts) `name` by hand and reports the outcome, not the intention: the status once
 * the attempt is ready, or the server's error when it failed (the worker may still retry it, as
 * the message says). With `noWait`, the status as soon as the server is starting.
 */
const startByHand = async (
  engine: McpView,
  name: string,
  how: 'start' | 'restart',
  noWait = false,
): Promise<McpServerStatus> => {
  const server = knownServer(engine, name).name;
  let off = () => {};
  const starting = new Promise<McpServerStatus>((resolve) => {
    off = engine.mcp.on((event) => {
      if (
        event.type === 'status' &&
        event.status.name === server &&
        event.status.state === 'starting'
      )
        resolve(event.status);
    });
  });
  const run = how === 'start' ? engine.mcp.startServer(server) : engine.mcp.restartServer(server);
  try {
    if (noWait) {
      run.catch(() => {}); // reported by mcp status
      return await Promise.race([run, starting]);
    }
    const status = await run;
    if (status.state === 'ready') return status;
    const retry = status.nextRestartAt
      ? `; it is tried again in ${Math.max(0, Math.round((status.nextRestartAt - Date.now()) / 100) / 10)} s`
      : '';
    throw new NifflerError(
      'mcp-connect',
      `${status.lastError?.message ?? `server "${server}" is ${status.state}`}${retry}; see niffler mcp logs ${server}`,
      { status },
    );
  } finally {
    off();
  }
};

/** Waits for `server` (known and enabled; all without one) to be done starting. */
const settle = async (engine: McpView, server: string | undefined, signal: AbortSignal) => {
  if (server) knownServer(engine, server);
  await waitForServers(engine, server ? [server] : undefined, signal);
};

/** Waits for `server` to be done starting; an error naming its state when it is not ready. */
const readyServer = async (engine: McpView, server: string, signal: AbortSignal) => {
  knownServer(engine, server);
  const status = (await waitForServers(engine, [server], signal)).find((s) => s.name === server);
  if (status && status.state !== 'ready')
    throw new NifflerError(
      'mcp-connect',
      `server "${server}" is ${status.state}${status.lastError ? `: ${status.lastError.message}` : ''}; see niffler mcp logs ${server}`,
    );
};

/** The MCP tools of the ready servers that the config lets exist (include/exclude applied). */
const configuredMcpTools = async (engine: McpView): Promise<McpToolInfo[]> => {
  const tools = await engine.mcp.listTools();
  if (!engine.loaded) return tools;
  const rules = configRules(engine.loaded);
  return tools.filter((tool) => isConfigured(mcpTool(tool), rules));
};

/** Calls a server's tool by hand (`niffler mcp call`), once the server is done starting. */
const callByHand = async (
  engine: McpView,
  { server, tool, args, progressToken }: ParamsOf<'mcp/call'>,
  { signal, client }: RequestContext,
): Promise<ResultOf<'mcp/call'>> => {
  knownServer(engine, server);
  const [status] = (await waitForServers(engine, [server], signal)).filter(
    (s) => s.name === server,
  );
  const info = (await configuredMcpTools(engine)).find(
    (t) => t.server === server && t.tool === tool,
  );
  if (!info) {
    if (status && status.state !== 'ready')
      throw new NifflerError(
        'mcp-connect',
        `server "${server}" is ${status.state}${status.lastError ? `: ${status.lastError.message}` : ''}; see niffler mcp logs ${server}`,
      );
    throw new NifflerError(
      'mcp-not-found',
      `server "${server}" has no tool "${tool}"; list its tools with niffler mcp tools ${server}`,
    );
  }
  return engine.mcp.callTool(info.name, args, {
    signal,
    ...(progressToken
      ? {
          onProgress: (p: { progress: number; total?: number; message?: string }) =>
            client.notify('progress', { token: progressToken, ...p }),
        }
      : {}),
  });
};

/** The `mcp/*` requests about the servers themselves: status, start and stop, OAuth. */
const serverHandlers = (engine: McpView): Handlers<ServerMethod> => ({
  'mcp/status': async ({ wait }, { signal }) => ({
    servers: wait ? await waitForServers(engine, undefined, signal) : await engine.mcp.status(),
    consumers: engine.gatewayConsumers(),
    configError: engine.configError,
    warnings: engine.loaded?.warnings ?? [],
  }),
  'mcp/start': async ({ name, noWait }) => startByHand(engine, name, 'start', noWait),
  'mcp/stop': async ({ name }) => engine.mcp.stopServer(knownServer(engine, name).name),
  'mcp/restart': async ({ name, noWait }) => startByHand(engine, name, 'restart', noWait),
  'mcp/login': async ({ name }, { signal }) =>
    engine.mcp.login(remoteServer(engine, name).name, signal),
  'mcp/logout': async ({ name }) => {
    const server = remoteServer(engine, name);
    const status = await engine.mcp.stopServer(server.name);
    const file = authFileOf(engine.paths.authDir, server.url);
    const removed = existsSync(file);
    rmSync(file, { force: true });
    return { status, removed };
  },
});

/** The `mcp/*` requests about what the servers offer: tools, prompts, resources, completions. */
const catalogHandlers = (engine: McpView): Handlers<CatalogMethod> => ({
  'mcp/tools': async ({ server }, { signal }) => {
    if (server) knownServer(engine, server);
    await waitForServers(engine, server ? [server] : undefined, signal);
    const tools = await configuredMcpTools(engine);
    return server ? tools.filter((tool) => tool.server === server) : tools;
  },
  'mcp/call': async (params, context) => callByHand(engine, params, context),
  'mcp/prompts': async ({ server }, { signal }) => {
    await settle(engine, server, signal);
    const prompts = await engine.mcp.listPrompts();
    return server ? prompts.filter((p) => p.server === server) : prompts;
  },
  'mcp/prompt': async ({ server, prompt, args }, { signal }) => {
    await readyServer(engine, server, signal);
    return engine.mcp.getPrompt(server, prompt, args, signal);
  },
  'mcp/resources': async ({ server }, { signal }) => {
    await settle(engine, server, signal);
    const [resources, templates] = await Promise.all([
      engine.mcp.listResources(),
      engine.mcp.listResourceTemplates(),
    ]);
    const mine = <T extends { server: string }>(list: T[]) =>
      server ? list.filter((r) => r.server === server) : list;
    return { resources: mine(resources), templates: mine(templates) };
  },
  'mcp/read': async ({ server, uri }, { signal }) => {
    await readyServer(engine, server, signal);
    return engine.mcp.readResource(server, uri, signal);
  },
  'mcp/complete': async (params) => {
    knownServer(engine, params.server);
    return engine.mcp.complete(params);
  },
  'mcp/trace': async ({ server, since }) => {
    knownServer(engine, server);
    return engine.mcp.trace(server, since);
  },
});

/** The `mcp/*` requests of the front-end protocol. */
export const mcpHandlers = (engine: McpView): Handlers<ServerMethod | CatalogMethod> => ({
  ...serverHandlers(engine),
  ...catalogHandlers(engine),
});
