import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ProtocolError,
  ProtocolErrorCode,
  type Client,
  type ClientCapabilities,
  type CreateMessageResult,
  type ElicitResult,
} from '@modelcontextprotocol/client';
import type {
  McpElicitation,
  McpElicitationAnswer,
  McpSamplingAnswer,
  McpSamplingParams,
} from '../protocol/mcp.ts';
import type { CatalogPart } from './catalog-types.ts';

/** What niffler offers servers: roots, sampling, form elicitation with schema defaults applied. */
export const CLIENT_CAPABILITIES: ClientCapabilities = {
  roots: { listChanged: true },
  sampling: {},
  elicitation: { form: { applyDefaults: true } },
};

export const CLIENT_INFO = { name: 'niffler', version: '0.1.0' };

/** The side of a connection that server-initiated requests and notifications reach. */
export interface ClientSide {
  roots(): string[];
  elicit(elicitation: McpElicitation, signal: AbortSignal): Promise<McpElicitationAnswer>;
  sample(params: McpSamplingParams, signal: AbortSignal): Promise<McpSamplingAnswer>;
  serverLog(level: string, logger: string | undefined, data: unknown): void;
  listChanged(part: CatalogPart): void;
}

/** `file://` roots for `roots/list`. */
const rootsOf = (paths: readonly string[]) =>
  paths.map((p) => ({ uri: pathToFileURL(p).href, name: basename(p) || p }));

/** Installs the handlers of server → client requests and notifications on a fresh `Client`. */
export const installClientHandlers = (client: Client, side: ClientSide): void => {
  client.setRequestHandler('roots/list', () => ({ roots: rootsOf(side.roots()) }));

  client.setRequestHandler('elicitation/create', async (request, ctx): Promise<ElicitResult> => {
    const params = request.params;
    if (params.mode === 'url')
      return { action: 'decline', _meta: { reason: 'niffler does not open URL elicitations' } };
    const answer = await side.elicit(
      { message: params.message, requestedSchema: params.requestedSchema },
      ctx.mcpReq.signal,
    );
    if (answer.action === 'accept') return { action: 'accept', content: { ...answer.content } };
    return {
      action: answer.action,
      ...(answer.reason ? { _meta: { reason: answer.reason } } : {}),
    };
  });

  client.setRequestHandler(
    'sampling/createMessage',
    async (request, ctx): Promise<CreateMessageResult> => {
      const answer = await side.sample(request.params, ctx.mcpReq.signal);
      if (!answer.ok)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `sampling declined: ${answer.reason}`,
        );
      return {
        model: answer.model,
        role: answer.role,
        content: answer.content,
        ...(answer.stopReason ? { stopReason: answer.stopReason } : {}),
      };
    },
  );

  client.setNotificationHandler('notifications/message', (notification) => {
    const { level, logger, data } = notification.params;
    side.serverLog(level, logger, data);
  });
  client.setNotificationHandler('notifications/tools/list_changed', () =>
    side.listChanged('tools'),
  );
  client.setNotificationHandler('notifications/prompts/list_changed', () =>
    side.listChanged('prompts'),
  );
  client.setNotificationHandler('notifications/resources/list_changed', () =>
    side.listChanged('resources'),
  );
};
