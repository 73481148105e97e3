import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fail, type ToolResult } from '../protocol/tool-result.ts';
import { failed, unavailable } from './call.ts';
import type { ConnectionContext, ServerConnection } from './connection.ts';
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
  conn: ServerConnection,
  request: Request,
  signal: AbortSignal,
  ctx: Ctx,
  run: (client: Client, options: RequestOptions) => Promise<CallToolResult['content']>,
): Promise<ToolResult> => {
  if (signal.aborted) return fail('canceled', 'the call was canceled');
  if (conn.state !== 'ready' || !conn.client) return unavailable(conn);
  try {
    const content = await run(conn.client, { signal, timeout: conn.spec.timeoutMs });
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
  conn: ServerConnection,
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

/** `prompts/get` as a `ToolResult`: each message as `role: content`. */
export const getPrompt = (
  conn: ServerConnection,
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
      return result.messages.flatMap((m) => [
        { type: 'text' as const, text: `${m.role}:` },
        m.content,
      ]);
    },
  );
