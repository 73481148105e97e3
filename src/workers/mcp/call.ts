import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolErrorCode, ToolResult } from '../protocol/tool-result.ts';
import type { ConnectionContext, ServerConnection } from './connection.ts';
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

const failure = (code: ToolErrorCode, message: string): ToolResult => ({
  ok: false,
  error: { code, message },
});

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
  const finish = (outcome: CallOutcome, result: ToolResult): ToolResult => {
    conn.stats.record(tool, outcome, performance.now() - started);
    return result;
  };
  const { signal } = options;
  if (signal.aborted) return failure('canceled', 'the call was canceled');
  if (conn.state !== 'ready' || !conn.client) return finish('error', unavailable(conn));
  try {
    await conn.limiter.acquire(signal);
  } catch (error) {
    if (signal.aborted) return failure('canceled', 'the call was canceled while queued');
    return finish('error', failure('server-crashed', (error as Error).message));
  }
  try {
    const client = conn.client;
    if (conn.state !== 'ready' || !client) return finish('error', unavailable(conn));
    const result = await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
      signal,
      timeout: conn.spec.timeoutMs,
      resetTimeoutOnProgress: true,
      ...(options.onProgress ? { onprogress: options.onProgress } : {}),
    });
    const schema = conn.outputSchema(tool);
    const schemaProblem =
      schema && !result.isError && result.structuredContent !== undefined
        ? checkOutput(schema, result.structuredContent)
        : schema && !result.isError
          ? 'the tool declares an output schema but returned no structuredContent'
          : undefined;
    const normalized = normalizeResult(result as CallToolResult, {
      maxChars: ctx.maxOutputChars,
      outputsDir: ctx.outputsDir,
      label: `${conn.name}__${tool}`,
      ...(schemaProblem !== undefined ? { schemaProblem } : {}),
    });
    return finish(normalized.ok ? 'ok' : 'error', normalized);
  } catch (error) {
    if (signal.aborted) return finish('error', failure('canceled', 'the call was canceled'));
    const code = error instanceof McpError ? error.code : undefined;
    if (code === (ErrorCode.RequestTimeout as number))
      return finish(
        'timeout',
        failure(
          'timeout',
          `server "${conn.name}" did not answer tools/call "${tool}" within ${conn.spec.timeoutMs / 1000} s (timeout); the call was canceled`,
        ),
      );
    const state = conn.status().state;
    if (code === (ErrorCode.ConnectionClosed as number) || state !== 'ready')
      return finish(
        'error',
        failure(
          state === 'stopped' ? 'server-unavailable' : 'server-crashed',
          conn.describeLoss('tools/call'),
        ),
      );
    if (code === (ErrorCode.InvalidParams as number))
      return finish('error', failure('invalid-args', (error as Error).message));
    return finish('error', failure('tool-error', (error as Error).message));
  } finally {
    conn.limiter.release();
  }
};

const unavailable = (conn: ServerConnection): ToolResult => {
  const status = conn.status();
  const why: Record<typeof status.state, string> = {
    disabled: 'is disabled in the configuration (enabled: false)',
    untrusted: 'comes from this repository, which is not trusted yet; run niffler trust',
    stopped: `is stopped; start it with niffler mcp start ${conn.name}`,
    starting: 'is still starting',
    ready: 'is not connected',
    degraded: `is restarting${status.lastError ? ` after: ${status.lastError.message}` : ''}`,
    failed: `has failed${status.lastError ? ` (${status.lastError.message})` : ''}; start it with niffler mcp start ${conn.name}`,
  };
  return failure('server-unavailable', `server "${conn.name}" ${why[status.state]}`);
};
