import { UriTemplate, type Tool } from '@modelcontextprotocol/server';
import type {
  McpPromptInfo,
  McpResourceInfo,
  McpResourceTemplateInfo,
  McpToolInfo,
} from '../../workers/protocol/mcp.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import type { ToolDefinition } from '../../workers/protocol/tools.ts';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { builtinTool, mcpTool, type CatalogTool, type Offer } from '../engine/capabilities.ts';

/**
 * A repository tool (`.niffler/tools/`, `~/.niffler/tools/`) as the gateway serves it: what its
 * file says of it, and how it runs (its command in bash's sandbox). Only those the engine may use:
 * none of an untrusted repository's, none that `tools.disabled` names.
 */
export interface ServedRepoTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  destructive: boolean;
  openWorld: boolean;
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
}

/** What the gateway needs of the engine's catalog. */
export interface CatalogSource {
  loaded(): LoadedConfig | null;
  definitions(): ToolDefinition[];
  repoTools(): ServedRepoTool[];
  listTools(): Promise<McpToolInfo[]>;
  listPrompts(): Promise<McpPromptInfo[]>;
  listResources(): Promise<McpResourceInfo[]>;
  listResourceTemplates(): Promise<McpResourceTemplateInfo[]>;
}

/** A tool the gateway may serve: its catalog entry and what describes it (one of the three). */
export interface GatewayTool {
  catalog: CatalogTool;
  def?: ToolDefinition;
  info?: McpToolInfo;
  repo?: ServedRepoTool;
}

/** A repository tool in the catalog: approved as an MCP tool is, its server named `repo`. */
const repoTool = (tool: ServedRepoTool): CatalogTool => ({
  name: tool.name,
  kind: 'mcp',
  server: 'repo',
  tool: tool.name,
  readOnly: tool.readOnly,
  destructive: tool.destructive,
  openWorld: tool.openWorld,
});

/**
 * The servers whose tools, prompts and resources the gateway serves: enabled ones the user runs —
 * theirs, or a trusted repository's (an untrusted repository serves none of its servers).
 */
const servedServers = (loaded: LoadedConfig | null): Set<string> =>
  new Set(
    (loaded?.servers ?? [])
      .filter((s) => s.enabled && (s.trust === 'yours' || s.trust === 'trusted'))
      .map((s) => s.name),
  );

/** A name as one consumer sees it: `server__name`, or the server's own with a `--server` scope. */
export const servedName = (server: string, name: string, scope: string | undefined): string =>
  scope ? name : `${server}__${name}`;

/**
 * The gateway's view of the catalog, kept until something changes (a server's tools, its state,
 * the config): the call path finds its tool without asking the MCP worker again.
 */
export class GatewayCatalog {
  #tools: Promise<GatewayTool[]> | undefined;

  constructor(private readonly source: CatalogSource) {}

  /** Forgets what it holds; the next request lists anew. */
  invalidate(): void {
    this.#tools = undefined;
  }

  /** The built-ins and the tools of served servers (within `scope`: that server's only). */
  async tools(scope: string | undefined): Promise<GatewayTool[]> {
    this.#tools ??= this.#load();
    const loading = this.#tools;
    // A failed listing is not kept: the next request tries again.
    loading.catch(() => {
      if (this.#tools === loading) this.#tools = undefined;
    });
    const all = await loading;
    return scope ? all.filter((t) => t.catalog.server === scope) : all;
  }

  async #load(): Promise<GatewayTool[]> {
    const served = servedServers(this.source.loaded());
    const builtins = this.source.definitions().map((def) => ({ catalog: builtinTool(def), def }));
    const mcp = (await this.source.listTools())
      .filter((info) => served.has(info.server))
      .map((info) => ({ catalog: mcpTool(info), info }));
    // A repository tool named like a built-in or an MCP tool is left out, as in a session.
    const taken = new Set([...builtins, ...mcp].map((t) => t.catalog.name));
    const repo = this.source
      .repoTools()
      .filter((tool) => !taken.has(tool.name))
      .map((tool) => ({ catalog: repoTool(tool), repo: tool }));
    return [...builtins, ...repo, ...mcp];
  }

  async prompts(scope: string | undefined): Promise<McpPromptInfo[]> {
    return this.#served(await this.source.listPrompts(), scope);
  }

  async resources(scope: string | undefined): Promise<McpResourceInfo[]> {
    return this.#served(await this.source.listResources(), scope);
  }

  async templates(scope: string | undefined): Promise<McpResourceTemplateInfo[]> {
    return this.#served(await this.source.listResourceTemplates(), scope);
  }

  #served<T extends { server: string }>(list: T[], scope: string | undefined): T[] {
    const served = servedServers(this.source.loaded());
    return list.filter((item) => served.has(item.server) && (!scope || item.server === scope));
  }

  /**
   * The server that answers for `uri`: the one listing it, else the one whose template matches
   * it (with a scope, that server); undefined when none does.
   */
  async serverOfUri(uri: string, scope: string | undefined): Promise<string | undefined> {
    if (scope) return scope;
    const listed = (await this.resources(undefined)).find((r) => r.uri === uri);
    if (listed) return listed.server;
    const templates = await this.templates(undefined);
    return templates.find((t) => matchesTemplate(t.uriTemplate, uri))?.server;
  }
}

const matchesTemplate = (template: string, uri: string): boolean => {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false; // a template the SDK cannot read matches nothing
  }
};

/** A tool as `tools/list` gives it to a consumer (names per scope, annotations for built-ins). */
export const listedTool = (offer: Offer, tool: GatewayTool, scope: string | undefined): Tool => {
  const catalog = offer.tool;
  const name = scope ? catalog.tool : catalog.name;
  if (tool.info)
    return {
      name,
      ...(tool.info.title ? { title: tool.info.title } : {}),
      ...(tool.info.description ? { description: tool.info.description } : {}),
      inputSchema: tool.info.inputSchema as Tool['inputSchema'],
      ...(tool.info.outputSchema ? { outputSchema: tool.info.outputSchema } : {}),
      ...(tool.info.annotations ? { annotations: { ...tool.info.annotations } } : {}),
    };
  if (tool.repo)
    return {
      name,
      description: tool.repo.description,
      inputSchema: tool.repo.inputSchema as Tool['inputSchema'],
      annotations: {
        readOnlyHint: tool.repo.readOnly,
        destructiveHint: tool.repo.destructive,
        openWorldHint: tool.repo.openWorld,
      },
    };
  const def = tool.def!;
  return {
    name,
    description: def.description,
    inputSchema: def.parameters as Tool['inputSchema'],
    annotations: {
      readOnlyHint: def.readOnly,
      destructiveHint: catalog.destructive,
      openWorldHint: catalog.openWorld,
    },
  };
};
