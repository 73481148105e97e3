import {
  fromJsonSchema,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type CallToolResult,
  type JsonSchemaType,
  type StandardSchemaV1,
  type Tool,
} from '@modelcontextprotocol/client';
import type { McpLogLevel, McpServerSpec, McpServerState, McpToolFact } from '../protocol/mcp.ts';
import { fail, type ToolResult } from '../protocol/tool-result.ts';
import type { CallScope } from './call-scope.ts';
import { MAX_INPUT_ROUNDS, type ServerLink } from './link.ts';
import type { Limiter } from './limiter.ts';
import type { CallOutcome, ServerStats } from './metrics.ts';
import { cacheTtlMs, type ResultCache } from './result-cache.ts';
import { normalizeResult } from './results.ts';

export interface CallOptions {
  signal: AbortSignal;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Who made the call (echoed on the server's requests meanwhile; see `call-scope.ts`). */
  asker?: number;
  /** How long a call waits for its server to finish starting (`mcp.startupWait`); unbounded when absent. */
  waitMs?: number;
}

const validators = new WeakMap<object, StandardSchemaV1<unknown>['~standard']>();

/**
 * Checks `structured` against `schema` (the SDK's validator; a `$ref` to the network is never
 * fetched: it does not compile); returns the problem, or undefined when it conforms.
 */
const checkOutput = (schema: object, structured: unknown): string | undefined => {
  let validator = validators.get(schema);
  if (!validator) {
    try {
      validator = fromJsonSchema(schema as JsonSchemaType)['~standard'];
      // Compiles now, so a schema that cannot is reported here (the SDK's validators are synchronous).
      void validator.validate(undefined);
    } catch (error) {
      return `the output schema does not compile: ${(error as Error).message}`;
    }
    validators.set(schema, validator);
  }
  const result = validator.validate(structured);
  if (result instanceof Promise) return undefined; // the SDK's validators are synchronous
  return result.issues ? result.issues.map((i) => i.message).join('; ') || 'invalid' : undefined;
};

/** JSON-RPC error of a 2026-07-28 server whose `Mcp-Param-*` headers did not match (SEP-2243). */
const HEADER_MISMATCH = -32020;

const withoutOutputSchema = new WeakMap<Tool, Tool>();

/**
 * The tool definition the SDK is given for a call: it mirrors `x-mcp-header` arguments from it,
 * and skips its own output-schema check (ours keeps the tool's text when structured content is
 * wrong) and its asynchronous look-up of the definition in its response cache.
 */
const definitionFor = (tool: Tool | undefined): Tool | undefined => {
  if (!tool) return undefined;
  let stripped = withoutOutputSchema.get(tool);
  if (!stripped) {
    const { outputSchema: _kept, ...rest } = tool;
    withoutOutputSchema.set(tool, (stripped = rest));
  }
  return stripped;
};

/** What a call needs of the worker's context (`ConnectionContext` is one). */
interface Ctx {
  outputsDir: string;
  maxOutputChars: number;
  logLevel: () => McpLogLevel;
}

/**
 * What a call needs of its server (`ServerBase` is one): this narrow view, so that this module
 * does not import the server that calls it.
 */
interface CallTarget {
  readonly name: string;
  readonly state: McpServerState;
  readonly lastErrorMessage: string | undefined;
  readonly link: ServerLink | undefined;
  readonly spec: Pick<McpServerSpec, 'cache' | 'timeoutMs'>;
  readonly limiter: Limiter;
  readonly stats: ServerStats;
  readonly results: ResultCache;
  readonly redact: (text: string) => string;
  observe(tool: string, fact: McpToolFact): void;
  tool(name: string): Tool | undefined;
  relistTools(signal: AbortSignal): Promise<void>;
  note(problem: string): void;
  describeLoss(method: string): string;
}

/** One tool call on its way to a ready server. */
interface Outgoing {
  link: ServerLink;
  conn: CallTarget;
  tool: string;
  args: Record<string, unknown>;
  options: CallOptions;
  ctx: Ctx;
}

const send = ({ link, conn, tool, args, options, ctx }: Outgoing): Promise<CallToolResult> => {
  const meta = link.requestMeta(ctx.logLevel());
  const toolDefinition = definitionFor(conn.tool(tool));
  const { onProgress } = options;
  return link.client.callTool(
    { name: tool, arguments: args, ...(meta ? { _meta: meta } : {}) },
    {
      signal: options.signal,
      timeout: conn.spec.timeoutMs,
      resetTimeoutOnProgress: true,
      ...(onProgress
        ? {
            onprogress: (progress: Parameters<typeof onProgress>[0]) => {
              conn.observe(tool, 'progress');
              onProgress(progress);
            },
          }
        : {}),
      ...(toolDefinition ? { toolDefinition } : {}),
    },
  );
};

/** What a result shows of its tool: image or audio only (no text), binary data, cut output. */
const observeResult = (conn: CallTarget, tool: string, result: CallToolResult, saved: boolean) => {
  const content = result.content ?? [];
  const text = content.some((block) => block.type === 'text' && block.text.trim() !== '');
  if (!text && content.some((block) => block.type === 'image')) conn.observe(tool, 'images');
  if (!text && content.some((block) => block.type === 'audio')) conn.observe(tool, 'audio');
  if (content.some((block) => block.type === 'resource' && 'blob' in block.resource))
    conn.observe(tool, 'binary');
  if (saved) conn.observe(tool, 'large');
};

/** Sends the call; on `HeaderMismatch` lists the tools again and sends it once more. */
const sendChecked = async (call: Outgoing): Promise<CallToolResult> => {
  try {
    return await send(call);
  } catch (error) {
    if (!ProtocolError.isInstance(error) || error.code !== HEADER_MISMATCH) throw error;
    call.conn.note(
      `tools/call "${call.tool}" was refused for mismatched Mcp-Param headers; tools listed again`,
    );
    await call.conn.relistTools(call.options.signal);
    return send(call);
  }
};

/** The structured content's problem against the tool's output schema, if any. */
const schemaProblemOf = (conn: CallTarget, tool: string, result: CallToolResult) => {
  const schema = conn.tool(tool)?.outputSchema;
  if (!schema || result.isError) return undefined;
  return result.structuredContent !== undefined
    ? checkOutput(schema, result.structuredContent)
    : 'the tool declares an output schema but returned no structuredContent';
};

/**
 * One `tools/call` on a ready connection, inside its concurrency limit: timeout reset by progress,
 * cancellation through `signal`, results normalized, and kept in the result cache where the
 * config allows it. `scope` is the call's entry among the calls in flight (see call-scope.ts), when
 * it has one. Never throws: every failure is a `ToolResult` the model can read.
 */
export const callTool = async (
  conn: CallTarget,
  tool: string,
  args: Record<string, unknown>,
  options: CallOptions,
  ctx: Ctx,
  scope?: CallScope,
): Promise<ToolResult> => {
  const started = performance.now();
  const { signal } = options;
  if (signal.aborted) return fail('canceled', 'the call was canceled');
  if (conn.state !== 'ready' || !conn.link) return record(conn, tool, started, unavailable(conn));
  const ttl = cacheTtlMs(conn.spec.cache, conn.tool(tool));
  const cached = ttl !== undefined ? conn.results.get(tool, args) : undefined;
  if (cached) return cached;
  // A free slot is taken without a round through the microtask queue.
  if (!conn.limiter.tryAcquire()) {
    if (scope) scope.queued = true;
    try {
      await conn.limiter.acquire(signal);
    } catch (error) {
      if (signal.aborted) return fail('canceled', 'the call was canceled while queued');
      return record(conn, tool, started, fail('server-crashed', (error as Error).message));
    } finally {
      if (scope) delete scope.queued;
    }
  }
  const slot = holdSlot(conn, signal, scope);
  try {
    const link = conn.link;
    if (conn.state !== 'ready' || !link) return record(conn, tool, started, unavailable(conn));
    const result = await sendChecked({ link, conn, tool, args, options, ctx });
    const schemaProblem = schemaProblemOf(conn, tool, result);
    const normalized = await normalizeResult(result, {
      maxChars: ctx.maxOutputChars,
      outputsDir: ctx.outputsDir,
      label: `${conn.name}__${tool}`,
      ...(schemaProblem !== undefined ? { schemaProblem } : {}),
    });
    observeResult(conn, tool, result, normalized.ok && normalized.savedTo !== undefined);
    if (ttl !== undefined) conn.results.set(tool, args, normalized, ttl);
    return record(conn, tool, started, redactFailure(conn, normalized));
  } catch (error) {
    return record(conn, tool, started, failed(conn, 'tools/call', tool, signal, error));
  } finally {
    slot.done();
  }
};

/**
 * The slot a call took: given back while the call waits for answers to what its server asked
 * (its call scope's `whileAnswering`), taken again before the answer goes to the server, and
 * released once when the call ends.
 */
const holdSlot = (conn: CallTarget, signal: AbortSignal, scope: CallScope | undefined) => {
  let held = true;
  let waiting = 0;
  let ended = false;
  if (scope?.server === conn.name)
    scope.whileAnswering = async (wait) => {
      if (waiting++ === 0 && held) {
        held = false;
        conn.limiter.release();
      }
      try {
        return await wait();
      } finally {
        if (--waiting === 0 && !ended && !held) {
          // Aborted or the server went away meanwhile: the call ends without its slot.
          await conn.limiter.acquire(signal).then(
            () => {
              if (ended) conn.limiter.release();
              else held = true;
            },
            () => undefined,
          );
        }
      }
    };
  return {
    done: () => {
      ended = true;
      if (scope) delete scope.whileAnswering;
      if (held) conn.limiter.release();
      held = false;
    },
  };
};

/** `text` without the server's secret values (its env, headers, OAuth secrets) and tokens. */
/**
 * A failed result with its words redacted: a server's error may quote its own credentials (a
 * failed upstream request with its token). Successful results are the tool's data, left as is.
 */
const redactFailure = (conn: CallTarget, result: ToolResult): ToolResult =>
  result.ok
    ? result
    : {
        ...result,
        error: { ...result.error, message: conn.redact(result.error.message) },
        ...(result.output !== undefined ? { output: conn.redact(result.output) } : {}),
        ...(result.content
          ? {
              content: result.content.map((block) =>
                block.type === 'text' ? { ...block, text: conn.redact(block.text) } : block,
              ),
            }
          : {}),
      };

/** Counts a finished call in the server's and the tool's metrics. */
const record = (
  conn: CallTarget,
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
  conn: CallTarget,
  method: string,
  subject: string,
  signal: AbortSignal,
  error: unknown,
): ToolResult => {
  if (signal.aborted) return fail('canceled', 'the call was canceled');
  const sdk = SdkError.isInstance(error) ? error.code : undefined;
  if (sdk === SdkErrorCode.RequestTimeout)
    return fail(
      'timeout',
      `server "${conn.name}" did not answer ${method} "${subject}" within ${conn.spec.timeoutMs / 1000} s (timeout); the call was canceled`,
    );
  const state = conn.state;
  if (sdk === SdkErrorCode.ConnectionClosed || state !== 'ready')
    return fail(
      state === 'stopped' ? 'server-unavailable' : 'server-crashed',
      conn.describeLoss(method),
    );
  if (sdk === SdkErrorCode.InputRequiredRoundsExceeded) {
    const message = `server "${conn.name}" asked for input ${MAX_INPUT_ROUNDS} rounds in a row without finishing ${method} "${subject}"; niffler gave up`;
    conn.note(message);
    return fail('tool-error', message);
  }
  if (ProtocolError.isInstance(error) && error.code === (ProtocolErrorCode.InvalidParams as number))
    return fail('invalid-args', conn.redact(error.message));
  return fail('tool-error', conn.redact((error as Error).message));
};

/** Why a server that is not ready cannot take a request, and what to do about it. */
export const unavailable = (conn: CallTarget): ToolResult => {
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
