import path from 'node:path';
import { parse as parseYamlScalar } from 'yaml';
import { NifflerError } from '../errors.ts';
import {
  findWorkspace,
  nifflerPaths,
  type Env,
  type NifflerPaths,
  type Workspace,
} from '../paths.ts';
import { expandVariables } from './expand.ts';
import { importClaudeFormat } from './interop.ts';
import {
  CLAUDE_SETTINGS_KINDS,
  claudeSettingsFiles,
  hookNotes,
  importClaudeSettings,
} from './claude-settings.ts';
import { PEER_REPO_KINDS, peerFiles, readPeerFile } from './peer-mcp.ts';
import {
  mergeLayer,
  parseKeyPath,
  PathConflict,
  setAt,
  type Origin,
  type Origins,
} from './merge.ts';
import {
  ConfigSchema,
  DEFAULT_MODELS,
  HooksSchema,
  PARSE_ONCE,
  type Config,
  type McpServerConfig,
} from './schema.ts';
import type { HookLayer } from '../extensions/hooks.ts';
import {
  formatPath,
  formatPlace,
  readConfigFile,
  type ConfigSource,
  type KeyPath,
  type ParsedFile,
} from './source.ts';
import { validateLayer, validateMerged } from './validate.ts';
import { repositoryContribution, withoutSettings } from '../trust/contribution.ts';
import type { Part } from '../trust/part.ts';
import { decideTrust, untrustedSummary, type TrustDecision } from '../trust/decide.ts';
import type { TrustLevel } from '../trust/levels.ts';
import type { PolicyLayer } from '../trust/policy.ts';
import { protectedPlaces, type ProtectedPlace } from '../trust/protected.ts';
import { readTrustStore } from '../trust/store.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import { extensionParts, readExtensions, type Extensions } from '../extensions/load.ts';
import { repoBinaryParts } from '../trust/repo-binaries.ts';

type Data = Record<string, unknown>;

/** `NIFFLER_*` variables that set config keys (above the files, below flags). */
export const ENV_KEYS: Record<string, string[]> = {
  NIFFLER_MODEL: ['model'],
  NIFFLER_LOG: ['logLevel'],
  NIFFLER_IDLE_MINUTES: ['daemon', 'idleMinutes'],
  NIFFLER_MAX_STEPS: ['agent', 'maxSteps'],
};

/** A command-line override: `--model x` or `--set key.path=value`. */
export interface FlagOverride {
  path: readonly PropertyKey[];
  value: unknown;
  flag: string;
}

export interface LoadOptions {
  cwd?: string;
  /** Use this root instead of discovering it (the daemon is given its root). */
  root?: string;
  env?: Env;
  flags?: FlagOverride[];
}

export type Transport = 'stdio' | 'http' | 'sse' | 'ws';

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

export interface ConfigFileInfo {
  kind: ConfigSource['kind'];
  file: string;
  exists: boolean;
}

export interface LoadedConfig {
  workspace: Workspace;
  root: string;
  config: Config;
  servers: ResolvedServer[];
  origins: Origins;
  /** Every file looked at, in precedence order (lowest first). */
  files: ConfigFileInfo[];
  warnings: string[];
  /** The one trust decision for this repository's contribution (see `src/main/trust/`). */
  trust: TrustDecision;
  /** `tools.policy` of each layer, lowest first: a `deny` in any of them wins. */
  policy: PolicyLayer[];
  /** Where the rules a model runs under live: writes there always ask (see `trust/protected.ts`). */
  protectedPlaces: ProtectedPlace[];
  /**
   * Agents, commands, repository tools and tasks found, trusted or not (`usableExtensions` says
   * what may be used); the repository's are part of the trust digest.
   */
  extensions: Extensions;
  /** `hooks:` of each config layer (a repository's only while trusted), lowest first. */
  hooks: HookLayer[];
}

export type LoadResult = { ok: true; value: LoadedConfig } | { ok: false; error: NifflerError };

/** Infers the transport of a server entry when `transport` is absent. */
export const inferTransport = (server: McpServerConfig): Transport => {
  if (server.transport) return server.transport;
  if (server.command) return 'stdio';
  const url = server.url ?? '';
  if (/^wss?:/i.test(url)) return 'ws';
  if (/\/sse\/?(\?.*)?$/i.test(url)) return 'sse';
  return 'http';
};

/** Sources a repository contributes: each needs trust for what it runs or widens. */
const REPO_KINDS: ReadonlySet<string> = new Set([
  'repo',
  'mcp-json',
  'claude-project',
  'claude-local',
  ...PEER_REPO_KINDS,
]);

const isRepoLayer = (layer: ParsedFile): boolean => REPO_KINDS.has(layer.source.kind);

/** The parts found in `layer`. */
const partsOf = (parts: readonly Part[], layer: ParsedFile): Part[] =>
  parts.filter((p) => p.key.startsWith(`${layer.source.kind}:`));

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

/** One value set at an exact key path by a `NIFFLER_*` variable or a flag. */
interface Override {
  path: readonly PropertyKey[];
  value: unknown;
  origin: Origin;
}

const envOverrides = (env: Env): Override[] =>
  Object.entries(ENV_KEYS).flatMap(([name, path]) => {
    const raw = env[name];
    return raw === undefined || raw === ''
      ? []
      : [{ path, value: parseScalar(raw), origin: { kind: 'env' as const, label: name } }];
  });

/** Applies overrides in order, each setting exactly its path (see `setAt`). */
const applyOverrides = (data: Data, overrides: Override[], origins: Origins): Data =>
  overrides.reduce((merged, override) => {
    try {
      return setAt(merged, override.path, override.value, origins, () => override.origin);
    } catch (error) {
      if (!(error instanceof PathConflict)) throw error;
      throw new NifflerError(
        'config-invalid',
        `${override.origin.label ?? override.origin.kind}: cannot set ${formatPath(override.path)}: ${formatPath(error.at)} is ${error.found}`,
      );
    }
  }, data);

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

const parseScalar = (raw: string): unknown => {
  try {
    return parseYamlScalar(raw) as unknown;
  } catch {
    return raw;
  }
};

/**
 * Loads the configuration of the workspace around `cwd`: defaults < global < NIFFLER_MCP_CONFIG <
 * `.mcp.json` < `.niffler/config.yaml` < `NIFFLER_*` env < flags. Files merge deeply; variables
 * and flags set exactly the path they name. Each file is checked for unknown keys and mistyped
 * values, then the merged result once (errors name the file:line, variable or flag behind the
 * value); applies workspace trust and returns the result or the error: never throws, so a running
 * daemon can keep its last good config.
 */
export const loadConfig = (options: LoadOptions = {}): LoadResult => {
  try {
    return { ok: true, value: load(options) };
  } catch (error) {
    if (error instanceof NifflerError) return { ok: false, error };
    return {
      ok: false,
      error: new NifflerError(
        'internal',
        `loading the configuration failed: ${(error as Error).message}`,
        {},
        { cause: error },
      ),
    };
  }
};

/** The config files of a workspace, lowest precedence first, read and parsed (absent ones listed). */
const readLayers = (
  root: string,
  paths: NifflerPaths,
  mcpConfigEnv: string | undefined,
  env: Env,
  warnings: string[],
): { files: ConfigFileInfo[]; layers: ParsedFile[] } => {
  const candidates: { kind: ConfigSource['kind']; file: string; claude: boolean }[] = [
    { kind: 'global', file: paths.globalConfig, claude: false },
    ...(mcpConfigEnv
      ? [{ kind: 'mcp-config-env' as const, file: mcpConfigEnv, claude: true }]
      : []),
    { kind: 'mcp-json', file: paths.mcpJson, claude: true },
    { kind: 'repo', file: paths.repoConfig, claude: false },
  ];
  const files: ConfigFileInfo[] = [];
  const layers: ParsedFile[] = [];
  for (const candidate of candidates) {
    const parsed = readConfigFile(candidate.file, { kind: candidate.kind }, env);
    files.push({ kind: candidate.kind, file: candidate.file, exists: parsed !== undefined });
    if (!parsed) {
      if (candidate.kind === 'mcp-config-env')
        throw new NifflerError(
          'config-not-found',
          `NIFFLER_MCP_CONFIG names ${candidate.file}, which does not exist; fix the variable or create the file`,
          { file: candidate.file },
        );
      continue;
    }
    layers.push(candidate.claude ? importClaudeFormat(parsed, warnings, env) : parsed);
  }
  const off = peersOff(layers);
  const peers = peerFiles(root, env, off).map((peer) => ({
    info: { kind: peer.kind, file: peer.file, exists: false },
    parsed: readPeerFile(peer, env, warnings),
  }));
  for (const peer of peers) peer.info.exists = peer.parsed !== undefined;
  // Yours below your niffler config; the repository's below its .mcp.json and niffler config.
  const isRepo = (kind: string) => REPO_KINDS.has(kind);
  const place = <T>(list: T[], kindOf: (item: T) => string, mine: T[], theirs: T[]) => {
    const first = list.findIndex((item) => isRepo(kindOf(item)));
    list.splice(first < 0 ? list.length : first, 0, ...theirs);
    list.unshift(...mine);
  };
  const parsedOf = (repo: boolean) =>
    peers.flatMap((p) => (p.parsed && isRepo(p.info.kind) === repo ? [p.parsed] : []));
  place(layers, (l) => l.source.kind, parsedOf(false), parsedOf(true));
  const infoOf = (repo: boolean) =>
    peers.filter((p) => isRepo(p.info.kind) === repo).map((p) => p.info);
  place(files, (f) => f.kind, infoOf(false), infoOf(true));
  const claude = off.has('claude')
    ? []
    : claudeSettingsFiles(root, env, readsClaudeSettings(layers));
  for (const candidate of claude) {
    const parsed = readConfigFile(candidate.file, { kind: candidate.kind }, env);
    files.push({ kind: candidate.kind, file: candidate.file, exists: parsed !== undefined });
    if (parsed) layers.push(importClaudeSettings(parsed, warnings, env));
  }
  for (const layer of layers) hookNotes(layer, warnings, env);
  return { files, layers };
};

/** The other assistants whose files a niffler config turns off (`peers.codex: false`…). */
const peersOff = (layers: readonly ParsedFile[]): Set<string> =>
  new Set(
    layers.flatMap((layer) => {
      const peers = layer.data['peers'];
      return isObject(peers) ? Object.keys(peers).filter((name) => peers[name] === false) : [];
    }),
  );

/** Whether your own config says to run the hooks of `~/.claude/settings.json` too. */
const readsClaudeSettings = (layers: readonly ParsedFile[]): boolean =>
  layers.some((layer) => {
    const hooks = layer.data['hooks'];
    return (
      layer.source.kind === 'global' && isObject(hooks) && hooks['readClaudeSettings'] === true
    );
  });

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
const mergeFiles = (expanded: readonly ParsedFile[], untrusted: readonly Part[]): Merged => {
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
    const own = isRepoLayer(layer)
      ? withoutSettings(layer.data, partsOf(untrusted, layer))
      : layer.data;
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
  trust: TrustDecision,
): ResolvedServer[] =>
  Object.entries(config.mcpServers).map(([name, definition]): ResolvedServer => {
    const source = serverSource.get(name) ?? { kind: 'default' };
    const fromRepo = REPO_KINDS.has(source.kind);
    return {
      name,
      displayName: definition.name ?? name,
      definition,
      transport: inferTransport(definition),
      source,
      enabled: definition.enabled !== false,
      trust: fromRepo ? trust.level : 'yours',
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

const load = (options: LoadOptions): LoadedConfig => {
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
  // Trust is decided on the files as written, before `${VAR}` expansion.
  const extensions = readExtensions(workspace.root, env);
  const trust = decideTrust(
    readTrustStore(paths.trustFile, env),
    workspace.root,
    repositoryContribution(
      layers.filter(isRepoLayer),
      [...extensionParts(extensions), ...repoBinaryParts(workspace.root)],
      { root: workspace.root, home: paths.home },
    ),
    env,
  );
  const errors: string[] = [];
  const expanded = layers.map((layer) => expandLayer(layer, env, errors));
  for (const layer of expanded) errors.push(...validateLayer(layer, env));
  if (errors.length) throw new NifflerError('config-invalid', errors.join('\n'), { errors });
  const merged = mergeFiles(expanded, trust.level === 'trusted' ? [] : trust.contribution.parts);
  applyEnvAndFlags(merged, env, options.flags ?? []);
  const problems = validateMerged(merged.data, merged.origins, describeOrigin(env, expanded));
  if (problems.length)
    throw new NifflerError('config-invalid', problems.join('\n'), { errors: problems });
  const config = ConfigSchema.parse(merged.data, PARSE_ONCE);
  if (!config.models[config.model])
    warnings.push(
      `model "${config.model}" is not defined under models; defined: ${Object.keys(config.models).join(', ')}`,
    );
  const summary = untrustedSummary(trust);
  if (summary) warnings.push(summary);
  warnings.push(...retiredKeys(config));
  return {
    workspace,
    root: workspace.root,
    config,
    servers: resolveServers(config, merged.serverSource, trust),
    origins: merged.origins,
    files,
    warnings,
    trust,
    policy: merged.policy,
    protectedPlaces: protectedPlaces(workspace.root, env, mcpConfigEnv ? [mcpConfigEnv] : []),
    extensions,
    hooks: merged.hooks,
  };
};

/** True when a server may be spawned or connected: enabled and trusted (or the user's own). */
export const isStartable = (server: ResolvedServer): boolean =>
  server.enabled && (server.trust === 'yours' || server.trust === 'trusted');

/** The servers the MCP worker should start: enabled, trusted and auto-started. */
export const serversToStart = (loaded: LoadedConfig): ResolvedServer[] =>
  loaded.servers.filter((s) => isStartable(s) && s.autoStart);

/**
 * Parses `--set key.path=value` (the value as YAML: numbers, booleans, lists). The path takes
 * `[N]` list indexes and `"…"` around a key with dots: `--set 'mcpServers."a.b".timeout=30'`.
 */
export const parseSetFlag = (text: string): FlagOverride => {
  const at = text.indexOf('=');
  const path = at > 0 ? parseKeyPath(text.slice(0, at)) : undefined;
  if (!path)
    throw new NifflerError(
      'usage',
      `--set expects key.path=value, got "${text}"; e.g. --set daemon.idleMinutes=5 or --set tools.allowedPaths[0]=/data`,
    );
  return {
    path,
    value: parseScalar(text.slice(at + 1)),
    flag: `--set ${text.slice(0, at)}`,
  };
};
