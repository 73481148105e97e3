import type { Worker } from 'node:worker_threads';
import { NifflerError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { exitCause, startWorker } from './entry.ts';
import type { BootedMcpWorker } from './mcp-types.ts';
import type { McpCalls } from '../../workers/protocol/mcp.ts';
import type { RpcChannel } from './rpc.ts';

// The MCP worker thread as the host starts it: ahead of its data (a cold daemon's first step),
// what its exit and its errors say, and how it is ended.

/** Starts the MCP worker before its data is known (McpHost.boot). */
export const bootMcpWorker = (): BootedMcpWorker => {
  const worker = startWorker('mcp');
  const booted: BootedMcpWorker = { worker, exited: false };
  worker.once('exit', () => (booted.exited = true));
  return booted;
};

/** A booted worker that died before it was given its data (its code failed to load). */
export const bootedExit = (booted: BootedMcpWorker): NifflerError =>
  new NifflerError(
    'worker-exited',
    `the MCP worker exited while starting${exitCause(booted.worker)}`,
  );

/** The worker exited with `code`. */
export const workerExit = (worker: Worker, code: number): NifflerError =>
  new NifflerError('worker-exited', `the MCP worker exited with code ${code}${exitCause(worker)}`, {
    code,
  });

/** Logs the worker's uncaught errors. */
export const logWorkerErrors = (worker: Worker, logger: Logger | undefined): void => {
  worker.on('error', (error) =>
    logger?.error('mcp worker error', { error: error.message, stack: error.stack }),
  );
};

/** Asks the worker to shut down (its servers with it), and ends the thread if it does not. */
export const endWorker = async (worker: Worker, rpc: RpcChannel<McpCalls>): Promise<void> => {
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  try {
    await rpc.request('shutdown', {}, { timeoutMs: 15_000 });
    const timer = setTimeout(() => void worker.terminate(), 5_000);
    await exited;
    clearTimeout(timer);
  } catch {
    // The worker is gone or stuck: end it ourselves.
    await worker.terminate();
  }
};
