import type { ConfigSource, KeyPath } from './source.ts';

export type Origin = ConfigSource & { line?: number };
export type Origins = Map<string, Origin>;

type Data = Record<string, unknown>;

const isObject = (value: unknown): value is Data =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The key of the origins map for a key path. */
export const originKey = (path: KeyPath): string => path.map(String).join('\u0000');

const dropOrigins = (origins: Origins, path: KeyPath): void => {
  const prefix = originKey(path);
  for (const key of [...origins.keys()])
    if (key === prefix || key.startsWith(prefix + '\u0000')) origins.delete(key);
};

const recordOrigins = (
  value: unknown,
  path: PropertyKey[],
  origins: Origins,
  origin: (path: KeyPath) => Origin,
): void => {
  if (isObject(value) && Object.keys(value).length > 0) {
    for (const [key, item] of Object.entries(value))
      recordOrigins(item, [...path, key], origins, origin);
  } else {
    origins.set(originKey(path), origin(path));
  }
};

const isOnlyDisable = (value: unknown): boolean =>
  isObject(value) && Object.keys(value).length === 1 && value['enabled'] === false;

/**
 * Merges `upper` over `lower`: objects merge deeply, arrays and scalars replace. `mcpServers`
 * merge by name: an entry replaces the lower one whole, except `{ enabled: false }`, which only
 * switches it off. Records where each leaf came from in `origins`.
 */
export const mergeLayer = (
  lower: Data,
  upper: Data,
  origins: Origins,
  origin: (path: KeyPath) => Origin,
  path: PropertyKey[] = [],
): Data => {
  const result: Data = { ...lower };
  for (const [key, value] of Object.entries(upper)) {
    const here = [...path, key];
    const below = result[key];
    const isServerEntry = path.length === 1 && path[0] === 'mcpServers';
    if (isServerEntry) {
      if (isOnlyDisable(value) && isObject(below)) {
        result[key] = { ...below, enabled: false };
        origins.set(originKey([...here, 'enabled']), origin([...here, 'enabled']));
      } else {
        dropOrigins(origins, here);
        result[key] = value;
        recordOrigins(value, here, origins, origin);
      }
    } else if (isObject(value) && isObject(below)) {
      result[key] = mergeLayer(below, value, origins, origin, here);
    } else {
      dropOrigins(origins, here);
      result[key] = value;
      recordOrigins(value, here, origins, origin);
    }
  }
  return result;
};

/** Sets `value` at `path`, creating objects on the way (for env and flag overrides). */
export const setPath = (path: readonly string[], value: unknown): Data => {
  const root: Data = {};
  let node = root;
  path.forEach((key, i) => {
    if (i === path.length - 1) node[key] = value;
    else node = node[key] = {} as Data;
  });
  return root;
};
