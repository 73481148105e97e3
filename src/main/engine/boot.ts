import { mkdirSync } from 'node:fs';
import type { FlagOverride } from '../config/load.ts';
import { loadConfig, type LoadedConfig } from '../extensions/workspace-config.ts';
import type { Logger } from '../log.ts';
import { nifflerPaths, type Env } from '../paths.ts';
import { ApiHost, resolveModelSpec } from '../threads/api.ts';
import { McpHost } from '../threads/mcp.ts';
import { mcpWorkerData } from '../threads/mcp-spec.ts';
import type { BootedMcpWorker } from '../threads/mcp-types.ts';
import type { BootedWorker } from '../threads/entry.ts';
import type { GatewayMaker } from './gateway-port.ts';
import { mark } from '../../workers/shared/timeline.ts';

export interface EngineOptions {
  root: string;
  env?: Env;
  /** Command-line overrides (`--set`); only an in-process engine gets them. */
  flags?: FlagOverride[];
  log: Logger;
  /** The socket the daemon listens on (null in-process). */
  socket?: string | null;
  /** Called when a front-end asks the daemon to stop, or one of another version asks it to restart. */
  onStopRequested?: (reason: string) => void;
  /** Called whenever clients or running turns change, for the idle timer. */
  onActivity?: () => void;
  /** Called with each config loaded, at start and at every good reload, before it is applied. */
  onConfig?: (loaded: LoadedConfig) => void;
  /** An MCP worker already loading its code (a cold daemon boots it first): given its data. */
  mcpWorker?: BootedMcpWorker;
  /** An API worker already loading its code (a cold daemon for a prompt boots it first). */
  apiWorker?: BootedWorker;
  /** Epoch ms the daemon started (its process, for a daemon); default: when the engine is made. */
  startedAt?: number;
  /**
   * A prompt is on its way (a daemon started for one): the API worker starts, and loads the
   * model's client library, as soon as the servers are spawned, not once they are ready.
   */
  promptSoon?: boolean;
  /**
   * Makes the engine's link to the gateway (`niffler mcp serve`), the layer above the engine's:
   * the daemon layer gives `GatewayLink` (gateway/link.ts), which loads the gateway's code on its
   * first consumer.
   */
  gateway: GatewayMaker;
}

/** What an engine starts from: its config as read, and its MCP worker on the way. */
export interface EngineStart {
  loaded: LoadedConfig | null;
  configError: string | null;
  mcp: Promise<McpHost>;
  /** The API worker, when a prompt is on its way (`promptSoon`): already loading the model's library. */
  api?: ApiHost;
}

/**
 * The first part of an engine's start, which a cold start waits on: reads the config (a broken
 * one is reported, not fatal) and gives the MCP worker its servers. Its own module, light: a
 * daemon runs it before it loads the rest of the engine's code, so the servers spawn while that
 * loads.
 */
export const beginEngine = (options: Omit<EngineOptions, 'gateway'>): EngineStart => {
  const env = options.env ?? process.env;
  const paths = nifflerPaths(options.root, env);
  mkdirSync(paths.mcpLogsDir, { recursive: true, mode: 0o700 });
  const result = loadConfig({ root: options.root, env, flags: options.flags ?? [] });
  const loaded = result.ok ? result.value : null;
  mark('config read');
  if (loaded) options.onConfig?.(loaded);
  const configError = result.ok ? null : result.error.message;
  if (configError) options.log.error('config invalid at start', { error: configError });
  // Without a daemon servers start anew for every command: no probe that costs a spawn each time.
  const probe = options.socket !== null;
  // A prompt on its way: the servers' kept catalogs serve its first request, and the MCP worker
  // loads its client code once that request has gone (McpWorkerData.deferClient).
  const deferClient = options.promptSoon === true;
  const mcp = McpHost.start(
    mcpWorkerData(options.root, loaded, paths, { env, probe, deferClient }),
    { logger: options.log.child({ scope: 'mcp' }) },
    options.mcpWorker,
  );
  // Its failure is the caller's, when it awaits this (after loading the engine's code meanwhile).
  mcp.catch(() => undefined);
  const api = options.promptSoon && loaded ? startApi(options, loaded, mcp) : undefined;
  // No config to take a model from: the turn says what is wrong, with no worker of its own.
  if (!api) void options.apiWorker?.worker.terminate();
  return { loaded, configError, mcp, ...(api ? { api } : {}) };
};

/**
 * The API worker of a cold start that a prompt waits for: started right after the servers were
 * spawned, loading the configured model's client library while the engine's code loads.
 */
const startApi = (
  options: Omit<EngineOptions, 'gateway'>,
  loaded: LoadedConfig,
  mcp: Promise<McpHost>,
): ApiHost => {
  const api = new ApiHost({
    log: options.log.child({ scope: 'api' }),
    ...(options.apiWorker ? { booted: options.apiWorker } : {}),
    // Then everything else: the MCP worker's client code, which the servers need to be ready.
    onFirstRequest: () =>
      void mcp.then(
        (host) => host.loadClient(),
        () => undefined,
      ),
  });
  try {
    api.warm(resolveModelSpec(loaded.config, loaded.config.model, options.env ?? process.env));
  } catch {
    // No model configured, or no key: the turn says so itself.
  }
  return api;
};
