import { NifflerError } from '../errors.ts';
import { nifflerPaths, type Workspace } from '../paths.ts';
import {
  mergeConfig,
  readConfigFiles,
  type LoadOptions,
  type MergedConfig,
} from '../config/load.ts';
import { isRepoLayer, type ConfigFileInfo } from '../config/layers.ts';
import type { ParsedFile } from '../config/source.ts';
import { repositoryContribution, withoutSettings } from '../trust/contribution.ts';
import { decideTrust, untrustedSummary, type TrustDecision } from '../trust/decide.ts';
import type { Part } from '../trust/part.ts';
import { protectedPlaces, type ProtectedPlace } from '../trust/protected.ts';
import { repoBinaryParts } from '../trust/repo-binaries.ts';
import { readTrustStore } from '../trust/store.ts';
import { extensionParts, readExtensions, type Extensions } from './load.ts';

// The config a workspace runs under, composed: config/ reads and checks the files, trust/
// decides on what the repository contributes (its config files, its extensions, its language
// server programs) and this module puts the two together — a repository's settings that need
// trust are left out of the merge until it has it.

export interface LoadedConfig extends MergedConfig {
  workspace: Workspace;
  root: string;
  /** Every file looked at, in precedence order (lowest first). */
  files: ConfigFileInfo[];
  warnings: string[];
  /** The one trust decision for this repository's contribution (see `src/main/trust/`). */
  trust: TrustDecision;
  /** Where the rules a model runs under live: writes there always ask (see `trust/protected.ts`). */
  protectedPlaces: ProtectedPlace[];
  /**
   * Agents, commands, repository tools and tasks found, trusted or not (`usableExtensions` says
   * what may be used); the repository's are part of the trust digest.
   */
  extensions: Extensions;
}

export type LoadResult = { ok: true; value: LoadedConfig } | { ok: false; error: NifflerError };

/** The parts found in `layer`. */
const partsOf = (parts: readonly Part[], layer: ParsedFile): Part[] =>
  parts.filter((p) => p.key.startsWith(`${layer.source.kind}:`));

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

const load = (options: LoadOptions): LoadedConfig => {
  const read = readConfigFiles(options);
  const { workspace, env, mcpConfigEnv } = read;
  const paths = nifflerPaths(workspace.root, env);
  // Trust is decided on the files as written, before `${VAR}` expansion.
  const extensions = readExtensions(workspace.root, env);
  const trust = decideTrust(
    readTrustStore(paths.trustFile, env),
    workspace.root,
    repositoryContribution(
      read.layers.filter(isRepoLayer),
      [...extensionParts(extensions), ...repoBinaryParts(workspace.root)],
      { root: workspace.root, home: paths.home },
    ),
    env,
  );
  const untrusted = trust.level === 'trusted' ? [] : trust.contribution.parts;
  const merged = mergeConfig(read, {
    keep: (layer) =>
      isRepoLayer(layer) ? withoutSettings(layer.data, partsOf(untrusted, layer)) : layer.data,
    repoTrust: trust.level,
    trustNote: untrustedSummary(trust),
  });
  return {
    workspace,
    root: workspace.root,
    ...merged,
    files: read.files,
    warnings: read.warnings,
    trust,
    protectedPlaces: protectedPlaces(workspace.root, env, mcpConfigEnv ? [mcpConfigEnv] : []),
    extensions,
  };
};
