import path from 'node:path';
import { NifflerError } from '../errors.ts';
import { findWorkspace, nifflerPaths, type Env, type Workspace } from '../paths.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import { expandVariables } from './expand.ts';
import { CLAUDE_SETTINGS_KINDS } from './claude-settings.ts';
import { isRepoKind, readLayers, type ConfigFileInfo } from './layers.ts';
import { mergeLayer, type Origin, type Origins } from './merge.ts';
import {
  ConfigSchema,
  DEFAULT_MODELS,
  HooksSchema,
  PARSE_ONCE,
  type Config,
  type HooksConfig,
  type McpServerConfig,
  type ToolPolicy,
} from './schema.ts';
import {
  formatPath,
  formatPlace,
  type ConfigSource,
  type KeyPath,
  type ParsedFile,
} from './source.ts';
import type { TrustLevel } from './trust-levels.ts';
import { validateLayer, validateMerged } from './validate.ts';
import { applyOverrides, envOverrides, type FlagOverride, type Override } from './overrides.ts';

export { parseSetFlag, type FlagOverride } from './overrides.ts';

// Reading and checking the config: the files found and read (layers.ts), `${VAR}` expanded,
// each file checked, merged over the defaults, variables and flags on top, the whole checked
// again. What a repository may contribute is decided above (trust/), and the config a workspace
// runs under composed there (extensions/workspace-config.ts): this module is handed what to
// keep of each file and the repository's trust level.

type Data = Record<string, unknown>;

export interface LoadOptions {
  cwd?: string;
  /** Use this root instead of discovering it (the daemon is given its root). */
  root?: string;
  env?: Env;
  flags?: FlagOverride[];
}

type Transport = 'stdio' | 'http' | 'sse' | 'ws';

/** A server as the MCP worker and listings see it: merged, expanded, with defaults and trust. */
export interface ResolvedServer {
  name: string;
  displayName: string;
  definition: McpServerConfig;
  transport: Transport;
  source: Origin;
  enabled: boolean;
  /** The user's own servers are `yours`; a repository's need `niffler trust`. */
  trust: TrustLevel;
  timeoutMs: number;
  startupTimeoutMs: number;
  maxConcurrency: number;
  autoStart: boolean;
}

/** Infers the transport of a server entry when `transport` is absent. */
const inferTransport = (server: McpServerConfig): Transport => {
  if (server.transport) return server.transport;
  if (server.command) return 'stdio';
  const url = server.url ?? '';
  if (/^wss?:/i.test(url)) return 'ws';
  if (/\/sse\/?(\?.*)?$/i.test(url)) return 'sse';
  return 'http';
};

/** A file's `tools.policy` as a policy layer, if it has rules. */
const policyLayer = (data: Data, source: ConfigSource): PolicyLayer[] => {
  const tools = data['tools'];
  const rules = isObject(tools) ? tools['policy'] : undefined;
  return isObject(rules) && Object.keys(rules).length
    ? [{ source: source.file ?? source.label ?? source.kind, rules: rules as PolicyLayer['rules'] }]
    : [];
};

/** A file's `hooks:` as a hook layer, if it has any (every layer's hooks run). */
const hookLayer = (data: Data, source: ConfigSource): HookLayer[] => {
  const parsed = HooksSchema.safeParse(data['hooks'] ?? {}, PARSE_ONCE);
  if (!parsed.success || Object.keys(parsed.data).length === 0) return [];
  const claude = CLAUDE_SETTINGS_KINDS.has(source.kind);
  const name = source.file ?? source.label ?? source.kind;
  return [{ source: name, hooks: parsed.data, ...(claude ? { dialect: 'claude' as const } : {}) }];
};

/** Each variable or flag that sets a policy rule (or all of `tools.policy`), as a layer. */
const overridePolicy = (overrides: readonly Override[]): PolicyLayer[] =>
  overrides.flatMap(({ path: at, value, origin }) => {
    if (at[0] !== 'tools' || at[1] !== 'policy') return [];
    const rules = at.length === 2 ? value : at.length === 3 ? { [String(at[2])]: value } : {};
    return isObject(rules)
      ? [{ source: origin.label ?? origin.kind, rules: rules as PolicyLayer['rules'] }]
      : [];
  });

/** `${VAR}` expanded in a file's values, but not in `hooks:` (a hook's command is the shell's). */
const expandLayer = (layer: ParsedFile, env: Env, errors: string[]): ParsedFile => {
  const problems: { path: KeyPath; variable: string }[] = [];
  const { hooks, ...rest } = layer.data;
  const data = expandVariables(rest, env, problems) as Record<string, unknown>;
  if (hooks !== undefined) data['hooks'] = hooks;
  for (const { path: at, variable } of problems)
    errors.push(
      `${formatPlace(layer.source.file, layer.lineOf(at), at, env)}: \${${variable}} is not set; export ${variable} or write \${${variable}:-default}`,
    );
  return { ...layer, data };
};

/**
 * Where a merged value came from, for error messages: `file:line key` (the line of that key in
 * that file, read from its YAML), `NIFFLER_X (environment)`, or `--set a.b (a.b.c)`.
 */
const describeOrigin =
  (env: Env, layers: readonly ParsedFile[]) =>
  (origin: Origin, at: KeyPath): string => {
    if (origin.file) {
      const layer = layers.find((l) => l.source.file === origin.file);
      return formatPlace(origin.file, layer?.lineOf(at) ?? origin.line, at, env);
    }
    if (origin.kind === 'env') return `${origin.label} (environment)`;
    const what = origin.label ?? origin.kind;
    return at.length ? `${what} (${formatPath(at)})` : what;
  };

/** One layer's `tools.policy` (a file, a variable, a flag; later an agent profile). */
export interface PolicyLayer {
  /** Where the rules come from, as shown to the user: a file, `--set tools.policy.bash`. */
  source: string;
  rules: Readonly<Record<string, ToolPolicy>>;
}

/**
 * Whose names a layer's hooks speak: niffler's own config (`niffler`: niffler's tool names and
 * arguments), or a Claude Code settings file (`claude`: `Bash`, `file_path`… in, and out).
 */
export type HookDialect = 'niffler' | 'claude';

/** One file's (or flag's) hooks. */
export interface HookLayer {
  source: string;
  hooks: HooksConfig;
  /** niffler's unless the layer came from a Claude Code settings file. */
  dialect?: HookDialect;
}

/** What merging the layers gave: the data, where each value came from, policy and hook layers, servers' sources. */
interface Merged {
  data: Data;
  origins: Origins;
  policy: PolicyLayer[];
  hooks: HookLayer[];
  serverSource: Map<string, Origin>;
}

const isOnlyDisable = (entry: unknown): boolean =>
  isObject(entry) && Object.keys(entry).length === 1 && entry['enabled'] === false;

/**
 * Defaults, then each file (a repository's without the parts that need trust while it has none),
 * recording where each value and each server came from, and each file's policy as a layer.
 */
const mergeFiles = (expanded: readonly ParsedFile[], keep: (layer: ParsedFile) => Data): Merged => {
  const origins: Origins = new Map();
  let data: Data = mergeLayer(
    {},
    { ...ConfigSchema.parse({}, PARSE_ONCE), models: DEFAULT_MODELS },
    origins,
    () => ({
      kind: 'default',
    }),
  );
  const serverSource = new Map<string, Origin>();
  const policy: PolicyLayer[] = [];
  const hooks: HookLayer[] = [];
  for (const layer of expanded) {
    const own = keep(layer);
    policy.push(...policyLayer(own, layer.source));
    hooks.push(...hookLayer(own, layer.source));
    const origin = (at: KeyPath): Origin => ({
      ...layer.source,
      ...(layer.lineOf(at) ? { line: layer.lineOf(at)! } : {}),
    });
    data = mergeLayer(data, own, origins, origin);
    const servers = own['mcpServers'];
    if (isObject(servers))
      for (const [name, entry] of Object.entries(servers))
        if (!isOnlyDisable(entry) || !serverSource.has(name))
          serverSource.set(name, origin(['mcpServers', name]));
  }
  return { data, origins, policy, hooks, serverSource };
};

/** Variables and flags on top: each sets exactly its path (and a policy rule is one more layer). */
const applyEnvAndFlags = (merged: Merged, env: Env, flags: readonly FlagOverride[]): void => {
  const overrides: Override[] = [
    ...envOverrides(env),
    ...flags.map((flag) => ({
      path: flag.path,
      value: flag.value,
      origin: { kind: 'flag' as const, label: flag.flag },
    })),
  ];
  merged.data = applyOverrides(merged.data, overrides, merged.origins);
  merged.policy.push(...overridePolicy(overrides));
  for (const { path: at, origin } of overrides)
    if (at[0] === 'mcpServers' && at.length > 1 && !merged.serverSource.has(String(at[1])))
      merged.serverSource.set(String(at[1]), origin);
};

/** Each configured server as the MCP worker and listings see it: defaults applied, trust named. */
const resolveServers = (
  config: Config,
  serverSource: Map<string, Origin>,
  repoTrust: TrustLevel,
): ResolvedServer[] =>
  Object.entries(config.mcpServers).map(([name, definition]): ResolvedServer => {
    const source = serverSource.get(name) ?? { kind: 'default' };
    const fromRepo = isRepoKind(source.kind);
    return {
      name,
      displayName: definition.name ?? name,
      definition,
      transport: inferTransport(definition),
      source,
      enabled: definition.enabled !== false,
      trust: fromRepo ? repoTrust : 'yours',
      timeoutMs: (definition.timeout ?? config.mcp.timeout) * 1000,
      startupTimeoutMs: (definition.startupTimeout ?? config.mcp.startupTimeout) * 1000,
      maxConcurrency: definition.maxConcurrency ?? config.mcp.maxConcurrency,
      autoStart: definition.autoStart !== false,
    };
  });

/** Keys still read so that old configs load, each with what replaced it. */
const retiredKeys = (config: Config): string[] =>
  (['maxFiles', 'maxBytes'] as const)
    .filter((key) => config.tools.searchLimits[key] !== undefined)
    .map(
      (key) =>
        `tools.searchLimits.${key} is no longer used: grep and glob search the whole workspace, ` +
        'bounded by tools.searchLimits.timeout and tools.output.maxChars, and say when they stop ' +
        'short; remove it from your config',
    );

/** The files of the workspace around `options.cwd` (or `options.root`), read as written. */
interface ConfigFiles {
  workspace: Workspace;
  env: Env;
  /** The file `NIFFLER_MCP_CONFIG` names, resolved. */
  mcpConfigEnv: string | undefined;
  files: ConfigFileInfo[];
  /** Each file read, lowest precedence first, before `${VAR}` expansion. */
  layers: ParsedFile[];
  flags: readonly FlagOverride[];
  warnings: string[];
}

export const readConfigFiles = (options: LoadOptions): ConfigFiles => {
  const env = options.env ?? process.env;
  const workspace = options.root
    ? { root: path.resolve(options.root), isGitRepo: true, searched: [path.resolve(options.root)] }
    : findWorkspace(options.cwd ?? process.cwd());
  const paths = nifflerPaths(workspace.root, env);
  const warnings: string[] = [];
  const mcpConfigEnv = env['NIFFLER_MCP_CONFIG']
    ? path.resolve(options.cwd ?? process.cwd(), env['NIFFLER_MCP_CONFIG'])
    : undefined;
  const { files, layers } = readLayers(workspace.root, paths, mcpConfigEnv, env, warnings);
  return { workspace, env, mcpConfigEnv, files, layers, flags: options.flags ?? [], warnings };
};

/** What the merged config gives: the config, its servers, where each value came from, the policy and hook layers. */
export interface MergedConfig {
  config: Config;
  servers: ResolvedServer[];
  origins: Origins;
  /** `tools.policy` of each layer, lowest first: a `deny` in any of them wins. */
  policy: PolicyLayer[];
  /** `hooks:` of each config layer (a repository's only while trusted), lowest first. */
  hooks: HookLayer[];
}

/** How the layers merge: what to keep of each file, the repository's trust level, its note. */
interface MergeRule {
  keep: (layer: ParsedFile) => Record<string, unknown>;
  repoTrust: TrustLevel;
  /** What the repository's untrusted contribution left out, as a warning (after the model's). */
  trustNote?: string;
}

/**
 * Expands, checks, merges (defaults < files < variables < flags) and checks again; throws a
 * `config-invalid` error naming the file:line, variable or flag behind each bad value.
 */
export const mergeConfig = (read: ConfigFiles, rule: MergeRule): MergedConfig => {
  const { env, warnings } = read;
  const errors: string[] = [];
  const expanded = read.layers.map((layer) => expandLayer(layer, env, errors));
  for (const layer of expanded) errors.push(...validateLayer(layer, env));
  if (errors.length) throw new NifflerError('config-invalid', errors.join('\n'), { errors });
  const merged = mergeFiles(expanded, rule.keep);
  applyEnvAndFlags(merged, env, read.flags);
  const problems = validateMerged(merged.data, merged.origins, describeOrigin(env, expanded));
  if (problems.length)
    throw new NifflerError('config-invalid', problems.join('\n'), { errors: problems });
  const config = ConfigSchema.parse(merged.data, PARSE_ONCE);
  if (!config.models[config.model])
    warnings.push(
      `model "${config.model}" is not defined under models; defined: ${Object.keys(config.models).join(', ')}`,
    );
  if (rule.trustNote) warnings.push(rule.trustNote);
  warnings.push(...retiredKeys(config));
  return {
    config,
    servers: resolveServers(config, merged.serverSource, rule.repoTrust),
    origins: merged.origins,
    policy: merged.policy,
    hooks: merged.hooks,
  };
};

/** True when a server may be spawned or connected: enabled and trusted (or the user's own). */
const isStartable = (server: ResolvedServer): boolean =>
  server.enabled && (server.trust === 'yours' || server.trust === 'trusted');

/** The servers the MCP worker should start: enabled, trusted and auto-started. */
export const serversToStart = (loaded: { servers: readonly ResolvedServer[] }): ResolvedServer[] =>
  loaded.servers.filter((s) => isStartable(s) && s.autoStart);
