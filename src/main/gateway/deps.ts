import type { LoadedConfig } from '../extensions/workspace-config.ts';
import type { ApprovalStore } from '../engine/approvals.ts';
import type { BuiltinTools } from '../engine/tool-calls.ts';
import type { CommandRunner } from '../extensions/expand.ts';
import type { Logger } from '../log.ts';
import type { McpHost } from '../threads/mcp.ts';
import type { GatewayCatalog } from './catalog.ts';
import type { Exchanges } from './exchange.ts';

/** What the gateway's servers use of the engine: its config, catalog, tools and servers. */
export interface GatewayDeps {
  /** The config now (null while it has never loaded). */
  loaded(): LoadedConfig | null;
  root: string;
  catalog: GatewayCatalog;
  exchanges: Exchanges;
  approvals: Pick<ApprovalStore, 'remembered'>;
  tools: BuiltinTools;
  /** Runs hooks in bash's sandbox (the tools pool), as a session does. */
  runCommand: CommandRunner;
  mcp: Pick<McpHost, 'callTool' | 'forward'>;
  log: Logger;
  /**
   * Resolves once no server (of `servers`, when named) is starting — bounded by `mcp.startupWait` —
   * or `signal` aborts.
   */
  settled(signal: AbortSignal, servers?: string[]): Promise<unknown>;
}
