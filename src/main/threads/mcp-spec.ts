import path from 'node:path';
import type { MergedConfig, ResolvedServer } from '../config/load.ts';
import { defaultConfig } from '../config/schema.ts';
import { expandHome, hiddenFromSandbox, type Env, type NifflerPaths } from '../paths.ts';
import type { SandboxPolicy } from '../../workers/protocol/sandbox.ts';
import type {
  McpCacheSpec,
  McpOAuthSpec,
  McpServerSpec,
  McpWorkerData,
} from '../../workers/protocol/mcp.ts';
import { VERSION } from '../version.ts';

// What the MCP worker is given: each configured server as a spec it runs (transport, sandbox,
// OAuth, cache, whether it may start), and the worker's data for the workspace.

const toOAuthSpec = (oauth: NonNullable<ResolvedServer['definition']['oauth']>): McpOAuthSpec => ({
  ...oauth,
  ...(oauth.scopes ? { scopes: [...oauth.scopes] } : {}),
  ...(oauth.idp ? { idp: { ...oauth.idp } } : {}),
});

/** What a server's sandbox is resolved against: `mcp.sandboxDefault`, the root, what to hide. */
interface SandboxContext {
  sandboxDefault: boolean;
  root: string;
  hide: string[];
  env?: Env;
}

/** A stdio server's sandbox policy, with its `write` paths made absolute; none when off. */
const sandboxOf = (server: ResolvedServer, ctx: SandboxContext): SandboxPolicy | undefined => {
  const asked = server.definition.sandbox ?? ctx.sandboxDefault;
  if (server.transport !== 'stdio' || asked === false) return undefined;
  const { write, network } = asked === true ? { write: [], network: false } : asked;
  return {
    write: write.map((entry) => path.resolve(ctx.root, expandHome(entry, ctx.env))),
    // The workspace stays readable even where the sandbox's private /tmp would cover it.
    read: [ctx.root],
    network,
    hide: ctx.hide,
  };
};

const toCacheSpec = (cache: NonNullable<ResolvedServer['definition']['cache']>): McpCacheSpec => ({
  ...(cache.ttlSeconds !== undefined ? { ttlSeconds: cache.ttlSeconds } : {}),
  ...(cache.tools
    ? {
        tools: Object.fromEntries(
          Object.entries(cache.tools).map(([tool, c]) => [tool, { ttlSeconds: c.ttlSeconds }]),
        ),
      }
    : {}),
});

/** Converts a resolved config entry to what the MCP worker runs. */
export const toServerSpec = (server: ResolvedServer, ctx?: SandboxContext): McpServerSpec => {
  const d = server.definition;
  const sandbox = ctx ? sandboxOf(server, ctx) : undefined;
  const limits = server.transport === 'stdio' ? d.limits : undefined;
  return {
    name: server.name,
    displayName: server.displayName,
    transport: server.transport,
    ...(d.command !== undefined ? { command: d.command } : {}),
    ...(d.args ? { args: [...d.args] } : {}),
    ...(d.env ? { env: { ...d.env } } : {}),
    ...(d.workingDir !== undefined ? { workingDir: d.workingDir } : {}),
    ...(d.url !== undefined ? { url: d.url } : {}),
    ...(d.headers ? { headers: { ...d.headers } } : {}),
    timeoutMs: server.timeoutMs,
    startupTimeoutMs: server.startupTimeoutMs,
    maxConcurrency: server.maxConcurrency,
    autoStart: server.autoStart,
    ...(d.oauth ? { oauth: toOAuthSpec(d.oauth) } : {}),
    ...(sandbox ? { sandbox } : {}),
    ...(limits ? { limits: { ...limits } } : {}),
    ...(d.protocol ? { protocol: d.protocol } : {}),
    ...(d.trace !== undefined ? { trace: d.trace } : {}),
    ...(d.cache ? { cache: toCacheSpec(d.cache) } : {}),
    gate: !server.enabled
      ? 'disabled'
      : server.trust === 'untrusted' || server.trust === 'changed'
        ? 'untrusted'
        : 'startable',
  };
};

/** The roots offered to MCP servers: the workspace root and `tools.allowedPaths`. */
const mcpRoots = (
  root: string,
  loaded: Pick<MergedConfig, 'config' | 'servers'> | null,
): string[] => [
  root,
  ...(loaded?.config.tools.allowedPaths ?? []).map((p) => path.resolve(root, p)),
];

/** `NIFFLER_MCP_DEFER_MS`, when set to a number of ms (see McpWorkerData.deferFallbackMs). */
const deferFallback = (env: Env): { deferFallbackMs?: number } => {
  const ms = Number(env['NIFFLER_MCP_DEFER_MS'] ?? Number.NaN);
  return Number.isFinite(ms) && ms >= 0 ? { deferFallbackMs: ms } : {};
};

/**
 * The MCP worker's `workerData` for the workspace `root` and its config (`null` when the config
 * did not load: no servers, defaults for the rest).
 */
export const mcpWorkerData = (
  root: string,
  loaded: Pick<MergedConfig, 'config' | 'servers'> | null,
  paths: NifflerPaths,
  options: { env?: Env; probe?: boolean; deferClient?: boolean } = {},
): McpWorkerData => {
  const env = options.env ?? process.env;
  const config = loaded?.config ?? defaultConfig();
  return {
    servers: (loaded?.servers ?? []).map((server) =>
      toServerSpec(server, {
        sandboxDefault: config.mcp.sandboxDefault,
        root,
        hide: [...new Set([paths.home, ...hiddenFromSandbox(env)])],
        env,
      }),
    ),
    root,
    roots: mcpRoots(root, loaded),
    logsDir: paths.mcpLogsDir,
    outputsDir: paths.outputsDir,
    serversDir: paths.serversDir,
    authDir: paths.authDir,
    protocolsFile: paths.protocolsFile,
    catalogsDir: paths.catalogsDir,
    version: VERSION,
    startupWaitMs: config.mcp.startupWait * 1000,
    probe: options.probe ?? true,
    ...(options.deferClient ? { deferClient: true } : {}),
    ...(config.tools.search === 'always' ? { toolsDeferred: true } : {}),
    ...deferFallback(env),
    logLevel: config.mcp.logLevel,
    maxOutputChars: config.tools.output.maxChars,
  };
};
