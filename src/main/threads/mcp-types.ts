import type { Worker } from 'node:worker_threads';
import { NifflerError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type {
  McpElicitation,
  McpElicitationAnswer,
  McpEvent,
  McpSamplingAnswer,
  McpSamplingParams,
} from '../../workers/protocol/mcp.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import type { RpcProgress } from './rpc.ts';

// The MCP host's types (threads/mcp.ts): its push events, its options and a call's, the worker
// booted ahead of its data, and a failed call as a tool's result.

/** Push events of the host (replies are consumed by the RPC layer). */
export type McpHostEvent =
  | Extract<
      McpEvent,
      {
        type: 'status' | 'tools-changed' | 'prompts-changed' | 'resources-changed' | 'server-log';
      }
    >
  | { type: 'worker-exit'; error: NifflerError; restarting: boolean };

export type ElicitationHandler = (request: {
  server: string;
  elicitation: McpElicitation;
}) => Promise<McpElicitationAnswer>;
export type SamplingHandler = (request: {
  server: string;
  params: McpSamplingParams;
}) => Promise<McpSamplingAnswer>;

export interface McpHostOptions {
  logger?: Logger;
  /** Default timeout of non-call requests (status, start…); default 60 s. */
  requestTimeoutMs?: number;
  /** Respawn the worker when it dies after start-up; default true. */
  respawn?: boolean;
}

export interface CallToolOptions {
  signal?: AbortSignal;
  onProgress?: (progress: RpcProgress) => void;
  /** Answers the server's elicitations during this call (instead of the host's handler). */
  onElicit?: ElicitationHandler;
  /** Answers the server's sampling requests during this call (instead of the host's handler). */
  onSample?: SamplingHandler;
}

export const toCallFailure = (error: unknown): ToolResult => {
  const e = error instanceof NifflerError ? error : new NifflerError('internal', String(error));
  const code =
    e.code === 'canceled' ? 'canceled' : e.code === 'worker-exited' ? 'server-crashed' : 'internal';
  return { ok: false, error: { code, message: e.message } };
};

/** An MCP worker started ahead of its data (McpHost.boot). */
export interface BootedMcpWorker {
  readonly worker: Worker;
  exited: boolean;
}
