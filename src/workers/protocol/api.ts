import type { ToolResult } from './tool-result.ts';
import type { WireError } from './wire-error.ts';

/** The three wire formats niffler speaks. */
export const PROVIDERS = ['openai', 'anthropic', 'ollama'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** How tools reach a model: its native tool calling, the `TOOL_CALL:` text protocol, or native first. */
export const TOOL_PROTOCOLS = ['native', 'text', 'auto'] as const;
type ToolProtocol = (typeof TOOL_PROTOCOLS)[number];

/**
 * The model families whose call syntax is recovered when it arrives as text (see
 * `workers/api/recovery/`), in the order `auto` tries them; `niffler` is the `TOOL_CALL:` protocol.
 */
const TOOL_CALL_FAMILIES = [
  'niffler',
  'harmony',
  'hermes',
  'qwen3-coder',
  'glm',
  'granite',
  'mistral',
  'deepseek',
  'kimi',
  'minimax',
  'command-r',
  'functionary',
  'phi4',
  'llama3',
  'pythonic',
  'gemma',
  'json',
] as const;
export type ToolCallFamily = (typeof TOOL_CALL_FAMILIES)[number];

/** `models.<name>.toolCallFormat`: every family in order (`auto`), one family, or no recovery. */
export const TOOL_CALL_FORMATS = ['auto', 'none', ...TOOL_CALL_FAMILIES] as const;
export type ToolCallFormat = (typeof TOOL_CALL_FORMATS)[number];

interface TextPart {
  type: 'text';
  text: string;
}

/** An image given inline (base64 without the `data:` prefix). */
export interface ImagePart {
  type: 'image';
  data: string;
  mimeType: string;
}

export type UserPart = TextPart | ImagePart;

/** A complete tool call as the model asked for it. */
export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/**
 * One message of a conversation, provider-neutral. The worker maps it to each wire format (and to
 * `TOOL_CALL:` / `TOOL_RESULT:` text for the text protocol), so callers never need to know which.
 */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | UserPart[] }
  | {
      role: 'assistant';
      content: string;
      /** Reasoning text the model streamed, kept for the transcript. */
      reasoning?: string;
      /** Anthropic's thinking signature; sent back so extended thinking survives tool use. */
      reasoningSignature?: string;
      toolCalls?: ToolCall[];
    }
  | {
      role: 'tool';
      toolCallId: string;
      /** The tool's name as the model called it. */
      name: string;
      /** The tool's result; images in it reach only vision-capable models. */
      result: ToolResult;
    };

/** A tool offered to the model. `inputSchema` is a JSON schema, passed through untouched. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** Retry policy for failures before the first token: 429, 5xx, connection resets, stalls. */
export interface RetrySettings {
  maxRetries: number;
  /** First backoff; doubles each attempt, with jitter. */
  baseDelayMs: number;
  /** Cap on any single wait, `Retry-After` included. */
  maxDelayMs: number;
}

/** A model resolved from config by main (API key value included): all a worker needs to call it. */
export interface ModelSpec {
  /** The config name (`models.<name>`), used in error messages. */
  name: string;
  provider: Provider;
  baseUrl: string;
  /** The model id sent to the provider. */
  model: string;
  apiKey?: string;
  /** The env var the key came from, to name it in errors. */
  apiKeyEnv?: string;
  toolProtocol: ToolProtocol;
  /** Which call syntax to recover from text (absent: `auto`). */
  toolCallFormat?: ToolCallFormat;
  vision: boolean;
  reasoning: boolean;
  maxTokens?: number;
  temperature?: number;
  headers?: Record<string, string>;
  retry: RetrySettings;
  /** The stream fails with `timeout` after this long without a byte (before and after the first token). */
  stallTimeoutMs: number;
  /** The user's config file as they would type it (`~/.niffler/config.yaml`), for messages. */
  configFile?: string;
  /** Tokens the model may be given (prompt and answer); Ollama is told it as `num_ctx`. */
  contextWindow?: number;
}

/** One call to a model. System prompts may be `system` messages anywhere at the front. */
export interface StreamRequest {
  model: ModelSpec;
  messages: ChatMessage[];
  tools: ToolSpec[];
}

export type StopReason = 'end' | 'tool-calls' | 'max-tokens' | 'content-filter' | 'other';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

/**
 * A normalized stream event. A stream is deltas, tool calls and notices, then exactly one `done`
 * or `error` (the host turns `error` into a thrown `NifflerError`).
 */
export type LlmEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; signature?: string }
  | { type: 'tool-call'; call: ToolCall }
  /** A call the model wrote but that could not be read; answer it with an error result so the model can correct it. */
  | { type: 'tool-call-invalid'; id: string; name: string; raw: string; message: string }
  | { type: 'usage'; usage: Usage }
  /** A retry is about to happen (before any token was streamed). */
  | { type: 'retry'; attempt: number; delayMs: number; retryAfterMs?: number; reason: string }
  /** `auto` fell back to the text protocol for this model; the host remembers it. */
  | { type: 'tool-protocol'; protocol: 'text'; reason: string }
  | { type: 'done'; stopReason: StopReason; toolProtocol: 'native' | 'text' }
  | { type: 'error'; error: WireError };

/** main → API worker. */
export type ApiRequest =
  | { type: 'stream'; id: number; request: StreamRequest }
  | { type: 'cancel'; id: number }
  /** Load a provider's client library now, while nothing waits for it (the daemon at idle). */
  /** Load the model's client library and stream one answer from a loopback stub (warm.ts). */
  | { type: 'warm'; model: ModelSpec }
  /**
   * Collect this thread's garbage: `always` after a busy stretch of turns, otherwise (the daemon
   * has gone quiet) if it grew enough to be worth it (shared/gc.ts).
   */
  | { type: 'collect-garbage'; always?: boolean };

/** API worker → main. */
export type ApiEvent =
  | { type: 'ready' }
  /** The worker took stream `id` and is sending it (ApiHostOptions.onFirstRequest). */
  | { type: 'taken'; id: number }
  | { type: 'event'; id: number; event: LlmEvent }
  | {
      type: 'log';
      level: 'debug' | 'info' | 'warn' | 'error';
      msg: string;
      data?: Record<string, unknown>;
    };
