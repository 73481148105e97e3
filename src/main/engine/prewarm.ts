import type { Config } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import type { Env } from '../paths.ts';
import { resolveModelSpec, type ApiHost } from '../threads/api.ts';
import type { ToolsHost } from '../threads/tools.ts';
import type { ContextWindows } from './context/window.ts';
import { serversSettled, type ServersView } from './server-waits.ts';

/** What warming up a daemon touches. */
interface Warmed {
  config: Config;
  env: Env;
  tools: () => Pick<ToolsHost, 'definitions'>;
  api: Pick<ApiHost, 'warm'>;
  windows: ContextWindows;
  log: Pick<Logger, 'debug'>;
}

/**
 * Builds what a first turn would otherwise build while the user waits — the API worker with
 * the model's client library loaded, the model's context window asked of its provider, the
 * tools' definitions — once the servers are done starting (at most 10 s on), so it does not
 * compete with them. The tools pool's thread is left to the first tool call: the model's
 * request does not wait for it, and an idle daemon is ~25 MiB smaller without it. For the
 * daemon; an in-process engine serves one command. Returns what stops it.
 */
export const warmWhenIdle = (servers: ServersView, warm: () => Promise<void>): (() => void) => {
  const controller = new AbortController();
  void serversSettled(servers, undefined, controller.signal, 10_000)
    .catch(() => undefined)
    .then(() => (controller.signal.aborted ? undefined : warm()));
  return () => controller.abort();
};

/** The tools' definitions, the model's client library and its context window, made now. */
export const prewarm = async ({ config, env, tools, api, windows, log }: Warmed): Promise<void> => {
  tools().definitions();
  try {
    const model = resolveModelSpec(config, config.model, env);
    api.warm(model);
    await windows.resolve(model, config.models[config.model]?.contextWindow);
  } catch (error) {
    // No model configured or no key yet: the first turn says so itself.
    log.debug('nothing to warm for the model', { error: String(error) });
  }
};
