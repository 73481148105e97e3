import type { EngineClient } from '../main/daemon/client.ts';
import { findWorkspace } from '../main/paths.ts';
import type { GlobalOptions } from './context.ts';
import { announceDaemonStart } from './render/output.ts';

/** An engine connection and how to close it. */
interface OpenEngine {
  client: EngineClient;
  close: () => Promise<void>;
}

/**
 * Connects to the engine of this workspace: the warm daemon (started when absent), or an
 * in-process engine with `--no-daemon` (and with `--set`, which the shared daemon cannot take).
 */
export const openEngine = async (
  options: GlobalOptions,
  onStarting: () => void = announceDaemonStart,
): Promise<OpenEngine> => {
  const { root } = findWorkspace(options.cwd ?? process.cwd());
  if (options.daemon === false || (options.set?.length ?? 0) > 0) {
    const [{ startInProcess }, { flagOverrides }] = await Promise.all([
      import('../main/daemon/in-process.ts'),
      import('./context.ts'),
    ]);
    const engine = await startInProcess({ root, flags: flagOverrides(options) });
    return { client: engine.client, close: engine.close };
  }
  const { connectDaemon } = await import('../main/daemon/lifecycle.ts');
  const client = await connectDaemon({
    root,
    client: process.argv.slice(2).join(' '),
    onStarting,
  });
  return { client, close: async () => client.close() };
};

/** Runs `fn` against the engine of this workspace (see `openEngine`); always closes it. */
export const withEngine = async <T>(
  options: GlobalOptions,
  fn: (client: EngineClient) => Promise<T>,
): Promise<T> => {
  const engine = await openEngine(options);
  try {
    return await fn(engine.client);
  } finally {
    await engine.close();
  }
};
