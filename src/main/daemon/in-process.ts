import { MessageChannel } from 'node:worker_threads';
import { createMessageConnection, PortMessageReader, PortMessageWriter } from 'vscode-jsonrpc/node';
import { Engine } from '../engine/engine.ts';
import { GatewayLink } from '../gateway/link.ts';
import { silentLogger, type Logger } from '../log.ts';
import type { Env } from '../paths.ts';
import type { FlagOverride } from '../config/load.ts';
import { connectPort, type EngineClient } from './client.ts';
import { serveConnection } from './connection.ts';

/**
 * Runs the engine inside this process (`--no-daemon`, tests) and connects to it over a
 * `MessageChannel`: the same JSON-RPC protocol as the daemon socket, another carrier.
 */
export const startInProcess = async (options: {
  root: string;
  env?: Env;
  log?: Logger;
  flags?: FlagOverride[];
  /** When the engine counts itself started (`mcp.startupWait` runs from it); default now. */
  startedAt?: number;
}): Promise<{ client: EngineClient; engine: Engine; close: () => Promise<void> }> => {
  const engine = await Engine.create({
    root: options.root,
    env: options.env,
    flags: options.flags ?? [],
    log: options.log ?? silentLogger,
    socket: null,
    gateway: (deps) => new GatewayLink(deps),
    ...(options.startedAt ? { startedAt: options.startedAt } : {}),
  });
  const { port1, port2 } = new MessageChannel();
  serveConnection(
    createMessageConnection(new PortMessageReader(port2), new PortMessageWriter(port2)),
    engine,
  );
  const client = connectPort(port1);
  return {
    client,
    engine,
    close: async () => {
      client.close();
      port2.close();
      await engine.close();
    },
  };
};
