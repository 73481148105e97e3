import type { Env } from '../paths.ts';
import type { KeyPath } from './source.ts';

interface ExpandProblem {
  path: KeyPath;
  variable: string;
}

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Expands `${VAR}` and `${VAR:-default}` in every string of `value`. Unset variables without a
 * default are collected in `problems` (with their key path) and left as written.
 */
export const expandVariables = (
  value: unknown,
  env: Env,
  problems: ExpandProblem[] = [],
  path: PropertyKey[] = [],
): unknown => {
  if (typeof value === 'string')
    return value.replace(PATTERN, (match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      if (found !== undefined) return found;
      problems.push({ path: [...path], variable: name });
      return match;
    });
  if (Array.isArray(value))
    return value.map((item, i) => expandVariables(item, env, problems, [...path, i]));
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        expandVariables(item, env, problems, [...path, key]),
      ]),
    );
  return value;
};
