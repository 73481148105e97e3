import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { extensionDirs } from '../extensions/load.ts';
import { watchExtensionDirs } from '../extensions/watch.ts';
import type { Env, NifflerPaths } from '../paths.ts';
import { watchConfigFiles } from './config-watch.ts';

/** What the engine watches to reload its config: where each lives, and what to call. */
interface ConfigWatches {
  root: string;
  env: Env;
  paths: Pick<NifflerPaths, 'globalConfig' | 'repoConfig' | 'mcpJson' | 'trustFile'>;
  /** The config as last read (its files), if one was. */
  loaded: LoadedConfig | null;
  /** The repository files trusted commands run. */
  scripts: string[];
  reload: () => void;
}

/**
 * Watches the config's files, the trust store, the scripts a trusted repository runs and the
 * extension directories; `reload` once a burst of changes is over. Returns what stops it.
 */
export const watchEngineConfig = ({
  root,
  env,
  paths,
  loaded,
  scripts,
  reload,
}: ConfigWatches): (() => void) => {
  // The trust store too: `niffler trust` in another terminal applies here at once.
  const files = [
    ...(loaded?.files.map((f) => f.file) ?? [paths.globalConfig, paths.repoConfig, paths.mcpJson]),
    paths.trustFile,
    // The repository files trusted commands run: an edit makes the repository untrusted.
    ...scripts,
  ];
  const stopFiles = watchConfigFiles(files, reload);
  // Agents, commands, repository tools and tasks: a change there can change trust too.
  const dirs = Object.values(extensionDirs(root, env));
  const stopDirs = watchExtensionDirs(
    dirs.flat().map((d) => d.dir),
    reload,
  );
  return () => {
    stopFiles();
    stopDirs();
  };
};
