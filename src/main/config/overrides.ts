import { parse as parseYamlScalar } from 'yaml';
import { NifflerError } from '../errors.ts';
import type { Env } from '../paths.ts';
import { parseKeyPath, PathConflict, setAt, type Origin, type Origins } from './merge.ts';
import { formatPath } from './source.ts';

// What sets a config key above the files: `NIFFLER_*` variables, then `--model` and `--set`
// flags, each setting exactly the path it names.

type Data = Record<string, unknown>;

/** `NIFFLER_*` variables that set config keys (above the files, below flags). */
const ENV_KEYS: Record<string, string[]> = {
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

/** One value set at an exact key path by a `NIFFLER_*` variable or a flag. */
export interface Override {
  path: readonly PropertyKey[];
  value: unknown;
  origin: Origin;
}

export const envOverrides = (env: Env): Override[] =>
  Object.entries(ENV_KEYS).flatMap(([name, path]) => {
    const raw = env[name];
    return raw === undefined || raw === ''
      ? []
      : [{ path, value: parseScalar(raw), origin: { kind: 'env' as const, label: name } }];
  });

/** Applies overrides in order, each setting exactly its path (see `setAt`). */
export const applyOverrides = (data: Data, overrides: Override[], origins: Origins): Data =>
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

const parseScalar = (raw: string): unknown => {
  try {
    return parseYamlScalar(raw) as unknown;
  } catch {
    return raw;
  }
};

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
