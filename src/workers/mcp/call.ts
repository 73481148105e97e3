import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { fail, type ToolResult } from '../protocol/tool-result.ts';
import { redactKnown, redactString } from '../shared/redact.ts';
import type { ConnectionContext, ServerConnection } from './connection.ts';
import { specSecrets } from './logs.ts';
import type { CallOutcome } from './metrics.ts';
import { normalizeResult } from './results.ts';

export interface CallOptions {
  signal: AbortSignal;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

const ajv = new AjvJsonSchemaValidator();
const validators = new WeakMap<object, JsonSchemaValidator<unknown>>();

/** Checks `structured` against `schema`; returns the problem, or undefined when it conforms. */
const checkOutput = (schema: object, structured: unknown): string | undefined => {
  let validate = validators.get(schema);
  if (!validate) {
    try {
      validate = ajv.getValidator(schema);
    } catch (error) {
      return `the output schema does not compile: ${(error as Error).message}`;
    }
    validators.set(schema, validate);
  }
  const result = validate(structured);
  return result.valid ? undefined : (result.errorMessage ?? 'invalid');
};

/**
 * One `tools/call` on a ready connection, inside its concurrency limit: timeout reset by progress,
 * cancellation through `signal` (the SDK sends `notifications/cancelled`), results normalized.
 * Never throws: every failure is a `ToolResult` the model can read.
 */
export const callTool = async (
  conn: ServerConnection,
  tool: string,
  args: Record<string, unknown>,
  options: CallOptions,
  ctx: Pick<ConnectionContext, 'outputsDir' | 'maxOutputChars'>,
): Promise<ToolResult> => {
  const started = performance.now();
  const { signal } = options;
  if (signal.aborted) return fail('canceled', 'the call was canceled');
  if (conn.state !== 'ready' || !conn.client) return record(conn, tool, started, unavailable(conn));
  // A free slot is taken without a round through the microtask queue.
  if (!conn.limiter.tryAcquire())
    try {
      await conn.limiter.acquire(signal);
    } catch (error) {
      if (signal.aborted) return fail('canceled', 'the call was canceled while queued');
      return record(conn, tool, started, fail('server-crashed', (error as Error).message));
    }
  try {
    const client = conn.client;
    if (conn.state !== 'ready' || !client) return record(conn, tool, started, unavailable(conn));
    const result = await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
      signal,
      timeout: conn.spec.timeoutMs,
      resetTimeoutOnProgress: true,
      ...(options.onProgress ? { onprogress: options.onProgress } : {}),
    });
    const schema = conn.outputSchema(tool);
    const schemaProblem = !schema
      ? undefined
      : result.isError
        ? undefined
        : result.structuredContent !== undefined
          ? checkOutput(schema, result.structuredContent)
          : 'the tool declares an output schema but returned no structuredContent';
    const normalized = await normalizeResult(result as CallToolResult, {
      maxChars: ctx.maxOutputChars,
      outputsDir: ctx.outputsDir,
      label: `${conn.name}__${tool}`,
      ...(schemaProblem !== undefined ? { schemaProblem } : {}),
    });
    return record(conn, tool, started, redactFailure(conn, normalized));
  } catch (error) {
    return record(conn, tool, started, failed(conn, 'tools/call', tool, signal, error));
  } finally {
    conn.limiter.release();
  }
};

/** `text` without the server's secret values (its env, headers, OAuth secrets) and tokens. */
const redactFor = (conn: ServerConnection, text: string): string =>
  redactString(redactKnown(text, specSecrets(conn.spec)));

/**
 * A failed result with its words redacted: a server's error may quote its own credentials (a
 * failed upstream request with its token). Successful results are the tool's data, left as is.
 */
const redactFailure = (conn: ServerConnection, result: ToolResult): ToolResult =>
  result.ok
    ? result
    : {
        ...result,
        error: { ...result.error, message: redactFor(conn, result.error.message) },
        ...(result.output !== undefined ? { output: redactFor(conn, result.output) } : {}),
        ...(result.content
          ? {
              content: result.content.map((block) =>
                block.type === 'text' ? { ...block, text: redactFor(conn, block.text) } : block,
              ),
            }
          : {}),
      };

/** Counts a finished call in the server's and the tool's metrics. */
const record = (
  conn: ServerConnection,
  tool: string,
  started: number,
  result: ToolResult,
): ToolResult => {
  const outcome: CallOutcome = result.ok
    ? 'ok'
    : result.error.code === 'timeout'
      ? 'timeout'
      : 'error';
  conn.stats.record(tool, outcome, performance.now() - started);
  return result;
};

/**
 * Words a failed request for the model: `method` is the MCP method (`tools/call`,
 * `resources/read`, `prompts/get`) and `subject` what it was about (the tool, URI or prompt).
 */
export const failed = (
  conn: ServerConnection,
  method: string,
  subject: string,
  signal: AbortSignal,
  error: unknown,
): ToolResult => {
  if (signal.aborted) return fail('canceled', 'the call was canceled');
  const code = error instanceof McpError ? error.code : undefined;
  if (code === (ErrorCode.RequestTimeout as number))
    return fail(
      'timeout',
      `server "${conn.name}" did not answer ${method} "${subject}" within ${conn.spec.timeoutMs / 1000} s (timeout); the call was canceled`,
    );
  const state = conn.state;
  if (code === (ErrorCode.ConnectionClosed as number) || state !== 'ready')
    return fail(
      state === 'stopped' ? 'server-unavailable' : 'server-crashed',
      conn.describeLoss(method),
    );
  const message = redactFor(conn, (error as Error).message);
  if (code === (ErrorCode.InvalidParams as number)) return fail('invalid-args', message);
  return fail('tool-error', message);
};

/** Why a server that is not ready cannot take a request, and what to do about it. */
export const unavailable = (conn: ServerConnection): ToolResult => {
  const { state, lastErrorMessage: last } = conn;
  // Keyed by string, not by the state union, so a state added to the protocol still reads well.
  const why: Record<string, string | undefined> = {
    disabled: 'is disabled in the configuration (enabled: false)',
    untrusted: 'comes from this repository, which is not trusted yet; run niffler trust',
    stopped: `is stopped; start it with niffler mcp start ${conn.name}`,
    starting: 'is still starting',
    ready: 'is not connected',
    degraded: `is restarting${last ? ` after: ${last}` : ''}`,
    failed: `has failed${last ? ` (${last})` : ''}; start it with niffler mcp start ${conn.name}`,
    'needs-auth': `needs authorization; run niffler mcp login ${conn.name}`,
  };
  return fail('server-unavailable', `server "${conn.name}" ${why[state] ?? `is ${state}`}`);
};
