import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type CreateMessageResult,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import type {
  McpElicitation,
  McpElicitationAnswer,
  McpSamplingAnswer,
  McpSamplingParams,
} from '../protocol/mcp.ts';
import type { CatalogPart } from './catalog.ts';

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
export const rootsOf = (paths: readonly string[]) =>
  paths.map((p) => ({ uri: pathToFileURL(p).href, name: basename(p) || p }));

/** Installs the handlers of server → client requests and notifications on a fresh `Client`. */
export const installClientHandlers = (client: Client, side: ClientSide): void => {
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: rootsOf(side.roots()) }));

  client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<ElicitResult> => {
    const params = request.params;
    if (params.mode === 'url')
      return { action: 'decline', _meta: { reason: 'niffler does not open URL elicitations' } };
    const answer = await side.elicit(
      { message: params.message, requestedSchema: params.requestedSchema },
      extra.signal,
    );
    if (answer.action === 'accept') return { action: 'accept', content: { ...answer.content } };
    return {
      action: answer.action,
      ...(answer.reason ? { _meta: { reason: answer.reason } } : {}),
    };
  });

  client.setRequestHandler(
    CreateMessageRequestSchema,
    async (request, extra): Promise<CreateMessageResult> => {
      const answer = await side.sample(request.params, extra.signal);
      if (!answer.ok)
        throw new McpError(ErrorCode.InvalidRequest, `sampling declined: ${answer.reason}`);
      return {
        model: answer.model,
        role: answer.role,
        content: answer.content,
        ...(answer.stopReason ? { stopReason: answer.stopReason } : {}),
      };
    },
  );

  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    const { level, logger, data } = notification.params;
    side.serverLog(level, logger, data);
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => side.listChanged('tools'));
  client.setNotificationHandler(PromptListChangedNotificationSchema, () =>
    side.listChanged('prompts'),
  );
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () =>
    side.listChanged('resources'),
  );
};
