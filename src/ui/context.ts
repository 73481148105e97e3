import { parseSetFlag, type FlagOverride } from '../main/config/load.ts';
import { loadConfig, type LoadedConfig } from '../main/extensions/workspace-config.ts';

/** Options every command shares (set on the root program). */
export interface GlobalOptions {
  cwd?: string;
  model?: string;
  set?: string[];
  daemon?: boolean;
  json?: boolean;
  yes?: boolean;
  /** The agent profile of the session (`--agent`). */
  agent?: string;
}

/** Flag overrides (`--model`, `--set k=v`) in the form the config loader takes. */
export const flagOverrides = (options: GlobalOptions): FlagOverride[] => [
  ...(options.model ? [{ path: ['model'], value: options.model, flag: '--model' }] : []),
  ...(options.set ?? []).map(parseSetFlag),
];

/** Loads the config for a command; a broken config throws its error (file:line, key, fix). */
export const loadForCommand = (options: GlobalOptions): LoadedConfig => {
  const result = loadConfig({ cwd: options.cwd ?? process.cwd(), flags: flagOverrides(options) });
  if (!result.ok) throw result.error;
  return result.value;
};
