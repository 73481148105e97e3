import path from 'node:path';
import { parse as parseYamlScalar } from 'yaml';
import { NifflerError } from '../errors.ts';
import { findWorkspace, nifflerPaths, type Env, type Workspace } from '../paths.ts';
import { expandVariables } from './expand.ts';
import { importClaudeFormat } from './interop.ts';
import { mergeLayer, setPath, type Origin, type Origins } from './merge.ts';
import { ConfigSchema, DEFAULT_MODELS, type Config, type McpServerConfig } from './schema.ts';
import {
  formatPlace,
  readConfigFile,
  type ConfigSource,
  type KeyPath,
  type ParsedFile,
} from './source.ts';
import { checkTrust, readTrust, type GatedParts, type TrustState } from './trust.ts';
import { validateLayer } from './validate.ts';
import { isObject } from '../../workers/shared/is-object.ts';

/** `NIFFLER_*` variables that set config keys (above the files, below flags). */
export const ENV_KEYS: Record<string, string[]> = {
  NIFFLER_MODEL: ['model'],
  NIFFLER_LOG: ['logLevel'],
  NIFFLER_IDLE_MINUTES: ['daemon', 'idleMinutes'],
  NIFFLER_MAX_STEPS: ['agent', 'maxSteps'],
};

/** A command-line override: `--model x` or `--set key.path=value`. */
export interface FlagOverride {
  path: string[];
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
  /** `global` servers are the user's own; repo servers need `niffler trust`. */
  trust: 'user' | 'trusted' | 'new' | 'changed';
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
  /** The repo's gated parts as written (unexpanded): what `niffler trust` records. */
  gated: GatedParts;
  trust: TrustState & { needed: boolean };
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

/** Splits a repo layer into what needs trust and what does not. */
const gatedParts = (data: Record<string, unknown>): GatedParts => {
  const servers: Record<string, unknown> = {};
  const mcpServers = data['mcpServers'];
  if (isObject(mcpServers))
    for (const [name, entry] of Object.entries(mcpServers))
      if (!(isObject(entry) && Object.keys(entry).length === 1 && entry['enabled'] === false))
        servers[name] = entry;
  const tools = isObject(data['tools']) ? data['tools'] : {};
  const policy = isObject(tools['policy']) ? tools['policy'] : {};
  const allows = Object.fromEntries(Object.entries(policy).filter(([, v]) => v === 'allow'));
  const settings = {
    ...(data['models'] !== undefined ? { models: data['models'] } : {}),
    ...(Array.isArray(tools['allowedPaths']) && tools['allowedPaths'].length
      ? { allowedPaths: tools['allowedPaths'] }
      : {}),
    ...(Object.keys(allows).length ? { allow: allows } : {}),
  };
  return { servers, settings: Object.keys(settings).length ? settings : undefined };
};

const withoutGatedSettings = (data: Record<string, unknown>): Record<string, unknown> => {
  const { models: _models, ...rest } = data;
  const tools = isObject(rest['tools']) ? { ...rest['tools'] } : undefined;
  if (tools) {
    if (Array.isArray(tools['allowedPaths']) && tools['allowedPaths'].length)
      delete tools['allowedPaths'];
    if (isObject(tools['policy']))
      tools['policy'] = Object.fromEntries(
        Object.entries(tools['policy']).filter(([, v]) => v !== 'allow'),
      );
    rest['tools'] = tools;
  }
  return rest;
};

const expandLayer = (layer: ParsedFile, env: Env, errors: string[]): ParsedFile => {
  const problems: { path: KeyPath; variable: string }[] = [];
  const data = expandVariables(layer.data, env, problems) as Record<string, unknown>;
  for (const { path: at, variable } of problems)
    errors.push(
      `${formatPlace(layer.source.file, layer.lineOf(at), at, env)}: \${${variable}} is not set; export ${variable} or write \${${variable}:-default}`,
    );
  return { ...layer, data };
};

const envLayer = (env: Env): ParsedFile | undefined => {
  let data: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  for (const [name, keyPath] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    data = mergeLayer(data, setPath(keyPath, parseScalar(raw)), new Map(), () => ({ kind: 'env' }));
    names[keyPath.join('.')] = name;
  }
  if (Object.keys(names).length === 0) return undefined;
  return { source: { kind: 'env' }, data, lineOf: () => undefined };
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
 * `.mcp.json` < `.niffler/config.yaml` < `NIFFLER_*` env < flags. Validates each layer (errors
 * name file:line and key path), applies workspace trust and returns the result or the error:
 * never throws, so a running daemon can keep its last good config.
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

const load = (options: LoadOptions): LoadedConfig => {
  const env = options.env ?? process.env;
  const workspace = options.root
    ? { root: path.resolve(options.root), isGitRepo: true, searched: [path.resolve(options.root)] }
    : findWorkspace(options.cwd ?? process.cwd());
  const paths = nifflerPaths(workspace.root, env);
  const warnings: string[] = [];
  const errors: string[] = [];

  const mcpConfigEnv = env['NIFFLER_MCP_CONFIG']
    ? path.resolve(options.cwd ?? process.cwd(), env['NIFFLER_MCP_CONFIG'])
    : undefined;
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

  // Trust is decided on the files as written, before `${VAR}` expansion.
  const isRepoLayer = (layer: ParsedFile) =>
    layer.source.kind === 'repo' || layer.source.kind === 'mcp-json';
  const repoLayers = layers.filter(isRepoLayer);
  const gated: GatedParts = repoLayers.reduce<GatedParts>(
    (acc, layer) => {
      const parts = gatedParts(layer.data);
      return {
        servers: { ...acc.servers, ...parts.servers },
        settings:
          parts.settings === undefined
            ? acc.settings
            : { ...(acc.settings as object | undefined), [layer.source.kind]: parts.settings },
      };
    },
    { servers: {}, settings: undefined },
  );
  const trustRecord = readTrust(paths.trustFile, env).workspaces[workspace.root];
  const trust = checkTrust(trustRecord, gated);
  const needed =
    !trust.settingsTrusted || Object.values(trust.servers).some((s) => s !== 'trusted');

  const expanded = layers.map((layer) => expandLayer(layer, env, errors));
  for (const layer of expanded) errors.push(...validateLayer(layer, env));

  const envData = envLayer(env);
  if (envData) {
    const byPath = Object.fromEntries(
      Object.entries(ENV_KEYS).map(([name, keyPath]) => [keyPath.join('.'), name]),
    );
    errors.push(
      ...validateLayer(
        envData,
        env,
        (at) => `${byPath[at.join('.')] ?? 'NIFFLER_*'} (environment)`,
      ),
    );
  }
  // All flags form one layer, so `--set models.x.provider=… --set models.x.model=…` validates whole.
  const flags = options.flags ?? [];
  const flagData = flags.reduce<Record<string, unknown>>(
    (acc, flag) =>
      mergeLayer(acc, setPath(flag.path, flag.value), new Map(), () => ({ kind: 'flag' })),
    {},
  );
  const flagLayers: ParsedFile[] = flags.length
    ? [{ source: { kind: 'flag', file: undefined }, data: flagData, lineOf: () => undefined }]
    : [];
  const flagName = (at: KeyPath): string =>
    flags.find(
      (f) => at.join('.').startsWith(f.path.join('.')) || f.path.join('.').startsWith(at.join('.')),
    )?.flag ?? '--set';
  for (const layer of flagLayers)
    errors.push(...validateLayer(layer, env, (at) => `${flagName(at)} (${at.join('.')})`));
  if (errors.length) throw new NifflerError('config-invalid', errors.join('\n'), { errors });

  const origins: Origins = new Map();
  let merged: Record<string, unknown> = mergeLayer(
    {},
    { ...ConfigSchema.parse({}), models: DEFAULT_MODELS },
    origins,
    () => ({
      kind: 'default',
    }),
  );
  const serverSource = new Map<string, Origin>();
  for (const layer of [...expanded, ...(envData ? [envData] : []), ...flagLayers]) {
    let data = layer.data;
    if (isRepoLayer(layer) && !trust.settingsTrusted) {
      const stripped = withoutGatedSettings(data);
      if (JSON.stringify(stripped) !== JSON.stringify(data))
        warnings.push(
          `${layer.source.file}: models, tools.allowedPaths and "allow" policies are ignored until you trust this workspace (niffler trust)`,
        );
      data = stripped;
    }
    const origin = (at: KeyPath): Origin => ({
      ...layer.source,
      ...(layer.lineOf(at) ? { line: layer.lineOf(at)! } : {}),
    });
    merged = mergeLayer(merged, data, origins, origin);
    const servers = data['mcpServers'];
    if (isObject(servers))
      for (const [name, entry] of Object.entries(servers))
        if (
          !(isObject(entry) && Object.keys(entry).length === 1 && entry['enabled'] === false) ||
          !serverSource.has(name)
        )
          serverSource.set(name, origin(['mcpServers', name]));
  }

  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success)
    throw new NifflerError(
      'config-invalid',
      `the merged configuration is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const config = parsed.data;
  if (!config.models[config.model])
    warnings.push(
      `model "${config.model}" is not defined under models; defined: ${Object.keys(config.models).join(', ')}`,
    );

  const servers = Object.entries(config.mcpServers).map(([name, definition]): ResolvedServer => {
    const source = serverSource.get(name) ?? { kind: 'default' };
    const fromRepo = source.kind === 'repo' || source.kind === 'mcp-json';
    return {
      name,
      displayName: definition.name ?? name,
      definition,
      transport: inferTransport(definition),
      source,
      enabled: definition.enabled !== false,
      trust: fromRepo ? (trust.servers[name] ?? 'new') : 'user',
      timeoutMs: (definition.timeout ?? config.mcp.timeout) * 1000,
      startupTimeoutMs: (definition.startupTimeout ?? config.mcp.startupTimeout) * 1000,
      maxConcurrency: definition.maxConcurrency ?? config.mcp.maxConcurrency,
      autoStart: definition.autoStart !== false,
    };
  });
  const untrusted = servers.filter(
    (s) => s.enabled && (s.trust === 'new' || s.trust === 'changed'),
  );
  if (untrusted.length)
    warnings.push(
      `${untrusted.length} server(s) from this repository are not started until you trust it: ${untrusted.map((s) => s.name).join(', ')}; review them with niffler mcp list, then run niffler trust`,
    );

  return {
    workspace,
    root: workspace.root,
    config,
    servers,
    origins,
    files,
    warnings,
    gated,
    trust: { ...trust, needed },
  };
};

/** True when a server may be spawned or connected: enabled and trusted (or the user's own). */
export const isStartable = (server: ResolvedServer): boolean =>
  server.enabled && (server.trust === 'user' || server.trust === 'trusted');

/** The servers the MCP worker should start: enabled, trusted and auto-started. */
export const serversToStart = (loaded: LoadedConfig): ResolvedServer[] =>
  loaded.servers.filter((s) => isStartable(s) && s.autoStart);

/** Parses `--set key.path=value` (the value as YAML: numbers, booleans, lists). */
export const parseSetFlag = (text: string): FlagOverride => {
  const at = text.indexOf('=');
  if (at <= 0)
    throw new NifflerError(
      'usage',
      `--set expects key.path=value, got "${text}"; e.g. --set daemon.idleMinutes=5`,
    );
  return {
    path: text.slice(0, at).split('.'),
    value: parseScalar(text.slice(at + 1)),
    flag: `--set ${text.slice(0, at)}`,
  };
};
