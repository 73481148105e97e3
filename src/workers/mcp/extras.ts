import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type CallToolResult,
  type Client,
  type RequestOptions,
} from '@modelcontextprotocol/client';
import type { McpCompletionRef, McpForwardMethod, McpForwardResult } from '../protocol/mcp.ts';
import { fail, type ToolResult } from '../protocol/tool-result.ts';
import { failed, unavailable } from './call.ts';
import type { ConnectionContext, ServerBase } from './server-base.ts';
import { normalizeResult } from './results.ts';

type Ctx = Pick<ConnectionContext, 'outputsDir' | 'maxOutputChars'>;

/** One request other than `tools/call`: its MCP method, what it is about, the saved file's label. */
interface Request {
  method: string;
  subject: string;
  label: string;
}

/**
 * Runs one request on a ready connection (with the server's timeout and `signal`) and gives its
 * content as a `ToolResult`, worded as `tools/call` words its failures. Never throws.
 */
const requestAsResult = async (
  conn: ServerBase,
  request: Request,
  signal: AbortSignal,
  ctx: Ctx,
  run: (client: Client, options: RequestOptions) => Promise<CallToolResult['content']>,
): Promise<ToolResult> => {
  if (signal.aborted) return fail('canceled', 'the call was canceled');
  const client = conn.client;
  if (conn.state !== 'ready' || !client) return unavailable(conn);
  try {
    const content = await run(client, { signal, timeout: conn.spec.timeoutMs });
    return await normalizeResult(
      { content },
      { maxChars: ctx.maxOutputChars, outputsDir: ctx.outputsDir, label: request.label },
    );
  } catch (error) {
    return failed(conn, request.method, request.subject, signal, error);
  }
};

/** `resources/read` as a `ToolResult` (each content becomes an embedded resource). */
export const readResource = (
  conn: ServerBase,
  uri: string,
  signal: AbortSignal,
  ctx: Ctx,
): Promise<ToolResult> =>
  requestAsResult(
    conn,
    { method: 'resources/read', subject: uri, label: `${conn.name}-resource` },
    signal,
    ctx,
    async (client, options) => {
      const result = await client.readResource({ uri }, options);
      return result.contents.map((resource) => ({ type: 'resource' as const, resource }));
    },
  );

/**
 * `prompts/get` as a `ToolResult` whose text is the prompt to send: its messages' contents, each
 * under `[role]` when the prompt has more than user messages.
 */
export const getPrompt = (
  conn: ServerBase,
  name: string,
  args: Record<string, string>,
  signal: AbortSignal,
  ctx: Ctx,
): Promise<ToolResult> =>
  requestAsResult(
    conn,
    { method: 'prompts/get', subject: name, label: `${conn.name}-prompt-${name}` },
    signal,
    ctx,
    async (client, options) => {
      const result = await client.getPrompt({ name, arguments: args }, options);
      // A prompt of user messages reads as what the user would type; a conversation keeps roles.
      const roles = result.messages.some((m) => m.role !== 'user');
      return result.messages.flatMap((m) => [
        ...(roles ? [{ type: 'text' as const, text: `[${m.role}]` }] : []),
        m.content,
      ]);
    },
  );

/** Completion values the server offers for one argument; none where it offers no completion. */
export const complete = async (
  conn: ServerBase,
  ref: McpCompletionRef,
  argument: { name: string; value: string },
  context: Record<string, string> | undefined,
  signal: AbortSignal,
): Promise<{ values: string[]; hasMore: boolean }> => {
  const client = conn.client;
  if (conn.state !== 'ready' || !client?.getServerCapabilities()?.completions)
    return { values: [], hasMore: false };
  const result = await client.complete(
    { ref, argument, ...(context ? { context: { arguments: context } } : {}) },
    { signal, timeout: conn.spec.timeoutMs },
  );
  return {
    values: result.completion.values.slice(0, 100),
    hasMore: result.completion.hasMore ?? false,
  };
};

/**
 * Passes one request to the server as it is and gives back its result whole, or its JSON-RPC
 * error with the server's code (redacted, as failed calls are); a method the server's protocol
 * revision does not have is -32601 (method not found); a server that is not ready, a timeout or a
 * lost connection is an internal error (-32603) saying which. Never throws.
 */
export const forward = async (
  conn: ServerBase,
  method: McpForwardMethod,
  params: Record<string, unknown>,
  signal: AbortSignal,
): Promise<McpForwardResult> => {
  const client = conn.client;
  if (conn.state !== 'ready' || !client) {
    const why = unavailable(conn);
    return { ok: false, code: -32603, message: why.ok ? '' : why.error.message };
  }
  try {
    const result = await client.request(
      { method, params },
      { signal, timeout: conn.spec.timeoutMs },
    );
    return { ok: true, result: result };
  } catch (error) {
    if (ProtocolError.isInstance(error))
      return {
        ok: false,
        code: error.code,
        message: conn.redact(error.message),
        ...(error.data !== undefined ? { data: error.data } : {}),
      };
    // A method the server's protocol revision has not (resources/subscribe in 2026-07-28): the
    // client refuses it unsent; the caller reads it as the server not having the method.
    if (
      SdkError.isInstance(error) &&
      error.code === SdkErrorCode.MethodNotSupportedByProtocolVersion
    )
      return {
        ok: false,
        code: -32601,
        message: `${conn.spec.name} speaks protocol ${client.getNegotiatedProtocolVersion() ?? '?'}, which has no ${method}`,
      };
    const subject = [params['uri'], params['name']].find((v) => typeof v === 'string') ?? '';
    const why = failed(conn, method, subject, signal, error);
    return { ok: false, code: -32603, message: why.ok ? '' : why.error.message };
  }
};
