import type { ModelSpec } from '../protocol/api.ts';
import type { ErrorCode, WireError } from '../protocol/wire-error.ts';
import { redactKnown, redactString, secretsFrom } from '../shared/redact.ts';
import { parseRetryAfter } from './retry.ts';

interface FailureOptions {
  retryable?: boolean;
  retryAfterMs?: number;
  /** The server said the model cannot take tools: `auto` falls back to the text protocol. */
  noToolSupport?: boolean;
  data?: Record<string, unknown>;
}

/** One attempt's failure, classified: what to tell the user and whether to try again. */
export class LlmFailure extends Error {
  override name = 'LlmFailure';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: FailureOptions = {},
  ) {
    super(message);
  }
  toWire(): WireError {
    return { code: this.code, message: this.message, data: this.options.data ?? {} };
  }
}

/** An HTTP error status from a client library whose own error class we cannot read (ollama). */
export class HttpStatusError extends Error {
  override name = 'HttpStatusError';
  constructor(
    readonly status: number,
    message: string,
    readonly headers?: Headers,
  ) {
    super(message);
  }
}

const configure = (spec: ModelSpec): string =>
  `configure a model under \`models:\` in ${spec.configFile ?? '~/.niffler/config.yaml'} (or .niffler/config.yaml) and choose it with \`model:\` or \`--model NAME\``;
const NO_TOOLS =
  /does not support tools|tools? (?:are|is) not supported|does not support (?:function|tool) call/i;
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;

/** Error codes (`ECONNREFUSED`, …) and messages along the `cause` chain. */
const causes = (error: unknown): { codes: string[]; messages: string[] } => {
  const codes: string[] = [];
  const messages: string[] = [];
  for (let e = record(error), depth = 0; e && depth < 6; e = record(e['cause']), depth++) {
    if (typeof e['code'] === 'string') codes.push(e['code']);
    if (typeof e['message'] === 'string') messages.push(e['message']);
  }
  return { codes, messages };
};

const describe = (spec: ModelSpec): string =>
  `model "${spec.name}" (${spec.provider} ${spec.model} at ${spec.baseUrl})`;

const httpFailure = (
  status: number,
  raw: string,
  headers: Headers | undefined,
  spec: ModelSpec,
) => {
  const message = raw.replace(/^\d{3}\s+/, '');
  const data = { status, url: spec.baseUrl, model: spec.model };
  if (NO_TOOLS.test(message))
    return new LlmFailure('llm-http', `${describe(spec)} has no native tool calling: ${message}`, {
      noToolSupport: true,
      data,
    });
  if (status === 401 || status === 403)
    return new LlmFailure(
      'llm-http',
      `${describe(spec)} refused the credentials (HTTP ${status}: ${message}). ` +
        (spec.apiKeyEnv
          ? `Check the key in $${spec.apiKeyEnv}.`
          : `Set \`apiKeyEnv\` for models.${spec.name} to the variable holding the key.`),
      { data },
    );
  if (status === 404)
    return new LlmFailure(
      'llm-http',
      `${describe(spec)} answered 404 (${message}). Check the model id and baseUrl` +
        (spec.provider === 'ollama' ? `, or run \`ollama pull ${spec.model}\`.` : '.'),
      { data },
    );
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  const retryAfterMs = parseRetryAfter(headers);
  return new LlmFailure('llm-http', `${describe(spec)} failed with HTTP ${status}: ${message}`, {
    retryable,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    data,
  });
};

/**
 * `failure` with its message redacted: the model's API key and header values wherever they
 * appear (a 401 body may echo the key), then token-shaped strings.
 */
const redacted = (failure: LlmFailure, spec: ModelSpec): LlmFailure => {
  const secrets = secretsFrom([spec.apiKey, ...Object.values(spec.headers ?? {})]);
  const message = redactString(redactKnown(failure.message, secrets));
  return message === failure.message
    ? failure
    : new LlmFailure(failure.code, message, failure.options);
};

/**
 * Classifies anything a provider threw into an `LlmFailure`, its message redacted: this is the
 * only way a provider's words reach the user, the log or the model.
 */
export const classify = (error: unknown, spec: ModelSpec): LlmFailure =>
  redacted(classifyRaw(error, spec), spec);

const classifyRaw = (error: unknown, spec: ModelSpec): LlmFailure => {
  if (error instanceof LlmFailure) return error;
  const e = record(error) ?? {};
  const status = typeof e['status'] === 'number' ? e['status'] : undefined;
  const message = error instanceof Error ? error.message : String(error);
  if (status !== undefined)
    return httpFailure(
      status,
      message,
      e['headers'] instanceof Headers ? e['headers'] : undefined,
      spec,
    );
  const { codes, messages } = causes(error);
  const unreachable = codes.find((code) => UNREACHABLE.has(code));
  if (unreachable)
    return new LlmFailure(
      'llm-unreachable',
      `could not reach ${describe(spec)}: ${unreachable === 'ECONNREFUSED' ? 'connection refused' : unreachable}. ` +
        `Start that server, or ${configure(spec)}.`,
      { data: { url: spec.baseUrl, code: unreachable } },
    );
  const all = messages.join(' | ');
  if (
    codes.some((code) => RESET.has(code)) ||
    /terminated|other side closed|socket hang up/i.test(all)
  )
    return new LlmFailure('llm-stream', `the connection to ${spec.baseUrl} was reset (${all})`, {
      retryable: true,
      data: { url: spec.baseUrl, codes },
    });
  if (error instanceof SyntaxError || /JSON|malformed/i.test(all))
    return new LlmFailure('llm-stream', `${describe(spec)} sent a malformed chunk: ${message}`, {
      data: { url: spec.baseUrl },
    });
  return new LlmFailure('llm-stream', `${describe(spec)} failed: ${all || message}`, {
    data: { url: spec.baseUrl },
  });
};
