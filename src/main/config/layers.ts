import { NifflerError } from '../errors.ts';
import type { Env, NifflerPaths } from '../paths.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import { importClaudeFormat } from './interop.ts';
import { claudeSettingsFiles, hookNotes, importClaudeSettings } from './claude-settings.ts';
import { PEER_REPO_KINDS, peerFiles, readPeerFile } from './peer-mcp.ts';
import { readConfigFile, type ConfigSource, type ParsedFile } from './source.ts';

// The config files of a workspace, found and read in precedence order: yours, the variable's,
// the repository's, the other assistants' beside them, Claude Code's settings (hooks only) last.

export interface ConfigFileInfo {
  kind: ConfigSource['kind'];
  file: string;
  exists: boolean;
}

/** Sources a repository contributes: each needs trust for what it runs or widens. */
const REPO_KINDS: ReadonlySet<string> = new Set([
  'repo',
  'mcp-json',
  'claude-project',
  'claude-local',
  ...PEER_REPO_KINDS,
]);

export const isRepoLayer = (layer: ParsedFile): boolean => REPO_KINDS.has(layer.source.kind);

/** Whether a source of that kind is the repository's (a server from it needs trust). */
export const isRepoKind = (kind: string): boolean => REPO_KINDS.has(kind);

interface Read {
  files: ConfigFileInfo[];
  layers: ParsedFile[];
}

/** niffler's own files and the `NIFFLER_MCP_CONFIG` one, lowest first, read and parsed. */
const readOwnFiles = (
  paths: NifflerPaths,
  mcpConfigEnv: string | undefined,
  env: Env,
  warnings: string[],
): Read => {
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
  return { files, layers };
};

/** The other assistants' MCP files, placed: yours below your niffler config, the repository's below its .mcp.json and niffler config. */
const placePeerFiles = (
  read: Read,
  root: string,
  env: Env,
  off: ReadonlySet<string>,
  warnings: string[],
): void => {
  const peers = peerFiles(root, env, off).map((peer) => ({
    info: { kind: peer.kind, file: peer.file, exists: false },
    parsed: readPeerFile(peer, env, warnings),
  }));
  for (const peer of peers) peer.info.exists = peer.parsed !== undefined;
  const place = <T>(list: T[], kindOf: (item: T) => string, mine: T[], theirs: T[]) => {
    const first = list.findIndex((item) => isRepoKind(kindOf(item)));
    list.splice(first < 0 ? list.length : first, 0, ...theirs);
    list.unshift(...mine);
  };
  const parsedOf = (repo: boolean) =>
    peers.flatMap((p) => (p.parsed && isRepoKind(p.info.kind) === repo ? [p.parsed] : []));
  place(read.layers, (l) => l.source.kind, parsedOf(false), parsedOf(true));
  const infoOf = (repo: boolean) =>
    peers.filter((p) => isRepoKind(p.info.kind) === repo).map((p) => p.info);
  place(read.files, (f) => f.kind, infoOf(false), infoOf(true));
};

/** The config files of a workspace, lowest precedence first, read and parsed (absent ones listed). */
export const readLayers = (
  root: string,
  paths: NifflerPaths,
  mcpConfigEnv: string | undefined,
  env: Env,
  warnings: string[],
): Read => {
  const read = readOwnFiles(paths, mcpConfigEnv, env, warnings);
  const off = peersOff(read.layers);
  placePeerFiles(read, root, env, off, warnings);
  const { files, layers } = read;
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
