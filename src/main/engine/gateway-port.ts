import type { LoadedConfig } from '../extensions/workspace-config.ts';
import type { Logger } from '../log.ts';
import type {
  AttachedClient,
  GatewayConsumerStatus,
  ParamsOf,
  RequestContext,
  ResultOf,
} from '../protocol.ts';
import type { McpHost } from '../threads/mcp.ts';
import type { McpHostEvent } from '../threads/mcp-types.ts';
import type { ToolsHost } from '../threads/tools.ts';
import type { ApprovalStore } from './approvals.ts';
import type { McpView } from './mcp-handlers.ts';

/**
 * What the gateway (`niffler mcp serve`, the layer above the engine) is made from: the engine's
 * parts, each asked for when it is needed.
 */
export interface GatewayLinkDeps {
  root(): string;
  /** The config now (read again when a script the trusted repository runs changed). */
  current(): LoadedConfig | null;
  approvals(): ApprovalStore;
  tools(): ToolsHost;
  mcp(): McpHost;
  log(): Logger;
  /** The servers, for `--server NAME` and for waiting on them. */
  engine(): McpView;
}

/**
 * The engine's view of the gateway: what it tells it and the two requests it serves. The daemon
 * layer gives the engine a maker of one (`EngineOptions.gateway`), so the engine never imports
 * the layer above it.
 */
export interface GatewayPort {
  /** The gateway's consumers now (none before the first came). */
  consumers(): GatewayConsumerStatus[];
  /** A front-end's message to one of its stdio consumers. */
  receive(client: AttachedClient, consumer: number, message: string): void;
  /** A front-end went: the consumers it owned end. */
  detach(client: AttachedClient): void;
  /** The config changed: everything served may have. */
  changed(): void;
  close(): Promise<void> | undefined;
  /** What the gateway's consumers must hear of the MCP worker's events. */
  tell(event: McpHostEvent): void;
  /** `gateway/open`: a stdio consumer for this front-end. */
  open(
    params: ParamsOf<'gateway/open'>,
    context: RequestContext,
  ): Promise<ResultOf<'gateway/open'>>;
  /** `gateway/listen`: an HTTP listener (loopback unless `remote`). */
  listen(
    params: ParamsOf<'gateway/listen'>,
    context: RequestContext,
  ): Promise<ResultOf<'gateway/listen'>>;
}

export type GatewayMaker = (deps: GatewayLinkDeps) => GatewayPort;
