import type { ToolResult } from '../protocol/tool-result.ts';
import type { ConnectionContext, ServerConnection } from './connection.ts';
import { normalizeResult } from './results.ts';

type Ctx = Pick<ConnectionContext, 'outputsDir' | 'maxOutputChars'>;

const notReady = (conn: ServerConnection): ToolResult => ({
  ok: false,
  error: {
    code: 'server-unavailable',
    message: `server "${conn.name}" is ${conn.state}, not ready`,
  },
});

const failed = (error: unknown): ToolResult => ({
  ok: false,
  error: { code: 'tool-error', message: (error as Error).message },
});

/** `resources/read` as a `ToolResult` (each content becomes an embedded resource). */
export const readResource = async (
  conn: ServerConnection,
  uri: string,
  signal: AbortSignal,
  ctx: Ctx,
): Promise<ToolResult> => {
  if (conn.state !== 'ready' || !conn.client) return notReady(conn);
  try {
    const result = await conn.client.readResource(
      { uri },
      { signal, timeout: conn.spec.timeoutMs },
    );
    const content = result.contents.map((resource) => ({ type: 'resource' as const, resource }));
    return await normalizeResult(
      { content },
      {
        ...ctx,
        maxChars: ctx.maxOutputChars,
        label: `${conn.name}-resource`,
      },
    );
  } catch (error) {
    return failed(error);
  }
};

/** `prompts/get` as a `ToolResult`: each message as `role: content`. */
export const getPrompt = async (
  conn: ServerConnection,
  name: string,
  args: Record<string, string>,
  signal: AbortSignal,
  ctx: Ctx,
): Promise<ToolResult> => {
  if (conn.state !== 'ready' || !conn.client) return notReady(conn);
  try {
    const result = await conn.client.getPrompt(
      { name, arguments: args },
      { signal, timeout: conn.spec.timeoutMs },
    );
    const content = result.messages.flatMap((m) => [
      { type: 'text' as const, text: `${m.role}:` },
      m.content,
    ]);
    return await normalizeResult(
      { content },
      {
        ...ctx,
        maxChars: ctx.maxOutputChars,
        label: `${conn.name}-prompt-${name}`,
      },
    );
  } catch (error) {
    return failed(error);
  }
};
