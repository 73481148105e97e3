import type { ModelSpec } from '../../workers/protocol/api.ts';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { matchesName } from '../name-glob.ts';
import type { McpToolFact, McpToolInfo } from '../../workers/protocol/mcp.ts';
import type { ToolDefinition } from '../../workers/protocol/tools.ts';

/**
 * What a tool may require of whoever uses it — a model in a session, or an MCP client of the
 * gateway (`niffler mcp serve`) — and what each of them can do. The only place that decides
 * which tools a consumer is offered: a consumer sees only the tools whose requirements it meets.
 *
 * - `approval`: the consumer's policy for the tool is `ask`: someone must say yes first;
 * - `elicitation`, `sampling`, `roots`: the tool's server asked for them during its calls;
 * - `progress`: its calls streamed progress;
 * - `images`, `audio`: its results were images (or audio) and nothing else;
 * - `binary`, `large`: its results held binary data, or went over the output cap;
 * - `destructive`, `open-world`: annotations (or, for built-ins, what the tool does).
 */
type Requirement =
  | 'approval'
  | 'elicitation'
  | 'sampling'
  | 'roots'
  | 'progress'
  | 'images'
  | 'audio'
  | 'binary'
  | 'large'
  | 'destructive'
  | 'open-world';

const REQUIREMENTS: readonly Requirement[] = [
  'approval',
  'elicitation',
  'sampling',
  'roots',
  'progress',
  'images',
  'audio',
  'binary',
  'large',
  'destructive',
  'open-world',
];

/** A tool of the catalog, before any consumer: a built-in or an MCP server's. */
export interface CatalogTool {
  /** The model-facing name (`server__tool` for MCP tools). */
  name: string;
  kind: 'builtin' | 'mcp';
  server?: string;
  /** The tool's own name (on its server). */
  tool: string;
  readOnly: boolean;
  destructive: boolean;
  openWorld: boolean;
  /** Built-ins: the policy when the config says nothing. */
  defaultPolicy?: 'allow' | 'ask';
  observed?: readonly McpToolFact[];
}

/** A built-in as the catalog holds it, with the traits its definition declares. */
export const builtinTool = (def: ToolDefinition): CatalogTool => ({
  name: def.name,
  kind: 'builtin',
  tool: def.name,
  readOnly: def.readOnly,
  destructive: def.destructive,
  openWorld: def.openWorld,
  defaultPolicy: def.defaultPolicy,
});

/** An MCP tool as the catalog holds it; its annotations are the server's word. */
export const mcpTool = (info: McpToolInfo): CatalogTool => ({
  name: info.name,
  kind: 'mcp',
  server: info.server,
  tool: info.tool,
  readOnly: info.annotations?.readOnlyHint === true,
  destructive: info.annotations?.destructiveHint === true,
  openWorld: info.annotations?.openWorldHint === true,
  ...(info.observed ? { observed: info.observed } : {}),
});

export type PolicyDecision = 'allow' | 'ask' | 'deny';

/** What `tool` requires of a consumer whose policy decides `decision` for it. */
export const requirementsOf = (tool: CatalogTool, decision: PolicyDecision): Requirement[] => {
  const found = new Set<Requirement>(tool.observed ?? []);
  if (decision === 'ask') found.add('approval');
  if (tool.destructive) found.add('destructive');
  if (tool.openWorld) found.add('open-world');
  return REQUIREMENTS.filter((r) => found.has(r));
};

/** How a consumer is reached: the engine itself (a model), or the gateway's transports. */
type ConsumerTransport = 'engine' | 'stdio' | 'http' | 'http-stateless' | 'ws';

/** What one consumer can do, and which tools its own overrides name. */
export interface ConsumerProfile {
  kind: 'model' | 'client';
  /** The model's config name, or the client's `clientInfo.name`. */
  name: string;
  transport: ConsumerTransport;
  meets: ReadonlySet<Requirement>;
  /** Denied tools stay in a model's list, so that it is told why when it calls one. */
  seesDenied: boolean;
  /** Globs on model-facing names (or server names): only these, none of these. */
  include?: readonly string[];
  exclude?: readonly string[];
}

/** What a model can do: everything the engine does for it, images where it has vision. */
export const modelProfile = (
  model: Pick<ModelSpec, 'name' | 'vision' | 'toolProtocol'>,
  disabled: ReadonlySet<string> = new Set(),
): ConsumerProfile => {
  // The engine asks the user, answers elicitations and sampling in the UI, answers roots, pages
  // large outputs and describes binary data; images reach a model only as native tool results.
  const images = model.vision && model.toolProtocol !== 'text';
  return {
    kind: 'model',
    name: model.name,
    transport: 'engine',
    meets: new Set(REQUIREMENTS.filter((r) => r !== 'audio' && (r !== 'images' || images))),
    seesDenied: true,
    exclude: [...disabled],
  };
};

/** An MCP client's declared capabilities, as far as the gateway reads them. */
interface ClientCapabilitiesView {
  elicitation?: { form?: object } | object;
  sampling?: object;
  roots?: object;
}

/** `serve.clients.<clientInfo.name>` in the config. */
interface ClientOverride {
  include?: readonly string[];
  exclude?: readonly string[];
}

/**
 * What an MCP client of the gateway can do. Asking its user (an approval, a server's
 * elicitation) needs declared form elicitation and a way back for the question: every transport
 * but 2025-era HTTP without a session. Sampling likewise. Roots are answered by niffler itself
 * (the workspace), progress travels on every transport, and images, audio, binary and large
 * results are content any MCP client takes.
 */
export const clientProfile = (
  client: { name: string; transport: Exclude<ConsumerTransport, 'engine'> },
  declared: ClientCapabilitiesView | undefined,
  override: ClientOverride = {},
): ConsumerProfile => {
  const canAsk = client.transport !== 'http-stateless';
  const elicitation = declared?.elicitation;
  const form = elicitation !== undefined && !isUrlOnly(elicitation);
  const meets = new Set<Requirement>(
    REQUIREMENTS.filter((r) => r !== 'approval' && r !== 'elicitation' && r !== 'sampling'),
  );
  if (canAsk && form) meets.add('approval').add('elicitation');
  if (canAsk && declared?.sampling) meets.add('sampling');
  return {
    kind: 'client',
    name: client.name,
    transport: client.transport,
    meets,
    seesDenied: false,
    ...(override.include ? { include: override.include } : {}),
    ...(override.exclude ? { exclude: override.exclude } : {}),
  };
};

/** Elicitation declared for URLs only (`{ url: {} }`): no forms, so no approval round. */
const isUrlOnly = (elicitation: object): boolean =>
  'url' in elicitation && !('form' in elicitation);

/** What the config says of which tools exist at all, and the consumer's policy per tool. */
interface ToolRules {
  /** `tools.disabled`. */
  disabledBuiltins?: readonly string[];
  /** `mcpServers.X.includeTools` / `excludeTools`, by server. */
  servers?: ReadonlyMap<string, ToolFilter>;
  /** The consumer's policy for a tool; `allow` when not given. */
  decide?: (tool: CatalogTool) => PolicyDecision;
}

interface ToolFilter {
  include?: readonly string[];
  exclude?: readonly string[];
}

/** A tool a consumer is offered, with its policy and requirements. */
export interface Offer {
  tool: CatalogTool;
  decision: PolicyDecision;
  requirements: Requirement[];
}

/** A tool a consumer is not offered, and why (for logs and `mcp tools`). */
export interface Hidden {
  tool: CatalogTool;
  why: string;
}

/** `include` then `exclude` (exclude wins); patterns are globs (`read_*`), exact otherwise. */
export const isIncluded = (name: string, filter: ToolFilter): boolean => {
  if (filter.exclude?.some((p) => matchesName(name, p))) return false;
  return !filter.include || filter.include.some((p) => matchesName(name, p));
};

/** Why the config, or the consumer's own overrides, leave `tool` out; undefined when they do not. */
const configuredOut = (
  tool: CatalogTool,
  profile: ConsumerProfile,
  rules: ToolRules,
): string | undefined => {
  if (!isConfigured(tool, rules))
    return tool.kind === 'builtin'
      ? 'tools.disabled'
      : `mcpServers.${tool.server}.includeTools/excludeTools`;
  // A consumer's own entries name the tool (model-facing name) or its whole server.
  const named = (p: string) =>
    matchesName(tool.name, p) || (tool.server !== undefined && matchesName(tool.server, p));
  const out = profile.exclude?.some(named) || (profile.include && !profile.include.some(named));
  if (!out) return undefined;
  return profile.kind === 'model'
    ? 'switched off for this session'
    : `serve.clients.${profile.name} include/exclude`;
};

/** Whether the config lets `tool` exist at all (`tools.disabled`, a server's include/exclude). */
export const isConfigured = (tool: CatalogTool, rules: ToolRules): boolean => {
  if (tool.kind === 'builtin') return !rules.disabledBuiltins?.includes(tool.tool);
  const server = tool.server ? rules.servers?.get(tool.server) : undefined;
  return !server || isIncluded(tool.tool, server);
};

/** Splits the catalog into what `profile` is offered and what it is not (with why). */
export const filterTools = (
  tools: readonly CatalogTool[],
  profile: ConsumerProfile,
  rules: ToolRules = {},
): { offered: Offer[]; hidden: Hidden[] } => {
  const offered: Offer[] = [];
  const hidden: Hidden[] = [];
  for (const tool of tools) {
    const out = configuredOut(tool, profile, rules);
    if (out) {
      hidden.push({ tool, why: `left out by ${out}` });
      continue;
    }
    const decision = rules.decide?.(tool) ?? 'allow';
    if (decision === 'deny' && !profile.seesDenied) {
      hidden.push({ tool, why: 'denied by policy' });
      continue;
    }
    const requirements = requirementsOf(tool, decision);
    const unmet = requirements.filter((r) => !profile.meets.has(r));
    if (unmet.length)
      hidden.push({ tool, why: `${profile.name} cannot meet: ${unmet.join(', ')}` });
    else offered.push({ tool, decision, requirements });
  }
  return { offered, hidden };
};

/** The config's rules on which tools exist: `tools.disabled`, each server's include/exclude. */
export const configRules = (config: LoadedConfig): Omit<ToolRules, 'decide'> => ({
  disabledBuiltins: config.config.tools.disabled,
  servers: new Map(
    config.servers.map((s) => [
      s.name,
      {
        ...(s.definition.includeTools ? { include: s.definition.includeTools } : {}),
        ...(s.definition.excludeTools ? { exclude: s.definition.excludeTools } : {}),
      },
    ]),
  ),
});
