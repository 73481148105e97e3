import type { ChatMessage, LlmEvent, ModelSpec, ToolSpec } from '../../protocol/api.ts';
import type { LogLevel } from '../../protocol/log-level.ts';

export type WorkerLog = (level: LogLevel, msg: string, data?: Record<string, unknown>) => void;

/** One HTTP attempt against a provider, with messages already shaped for the tool protocol. */
export interface ProviderCall {
  spec: ModelSpec;
  messages: ChatMessage[];
  /** Empty under the text protocol. */
  tools: ToolSpec[];
  /** Aborts the HTTP request (cancel, stall, or the text protocol's stop). */
  signal: AbortSignal;
  log: WorkerLog;
  /** Ids for tool calls the wire format leaves unnamed. */
  newId: () => string;
}

/**
 * Drives one client library and maps its stream to `LlmEvent`s, ending with `done`. Throws what
 * the library throws; the caller classifies it. Must throw (not end) when `signal` aborted: the
 * SDKs end streams quietly on abort, so call `signal.throwIfAborted()` after reading one, before
 * yielding what was gathered from it.
 */
export type ProviderStream = (call: ProviderCall) => AsyncGenerator<LlmEvent, void, undefined>;

/** A logger in the shape the anthropic client accepts, posting to main. */
const sdkLogger = (log: WorkerLog) => ({
  error: (msg: string, ...rest: unknown[]) => log('error', msg, { detail: rest.map(String) }),
  warn: (msg: string, ...rest: unknown[]) => log('warn', msg, { detail: rest.map(String) }),
  info: (msg: string, ...rest: unknown[]) => log('info', msg, { detail: rest.map(String) }),
  debug: (msg: string, ...rest: unknown[]) => log('debug', msg, { detail: rest.map(String) }),
});

/**
 * The anthropic client's options: our base URL and headers, its retries off (ours apply), no
 * timeout of its own (our stall timer governs), its log to main.
 */
export const sdkClientOptions = (call: ProviderCall) => ({
  baseURL: call.spec.baseUrl,
  maxRetries: 0,
  timeout: 24 * 60 * 60 * 1000,
  defaultHeaders: call.spec.headers ?? {},
  logger: sdkLogger(call.log),
});
