import { isObject } from '../../workers/shared/is-object.ts';
import type { ConfigSource, KeyPath } from './source.ts';

export type Origin = ConfigSource & { line?: number };
export type Origins = Map<string, Origin>;

type Data = Record<string, unknown>;

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

/** The contributions recorded at `path` or below it, in the order they were made (lowest first). */
export const originsUnder = (origins: Origins, path: KeyPath): Origin[] => {
  const prefix = originKey(path);
  return [...origins]
    .filter(([key]) => path.length === 0 || key === prefix || key.startsWith(prefix + '\u0000'))
    .map(([, origin]) => origin);
};

/** Why `setAt` could not set a path: the prefix that is in the way and what it holds. */
export class PathConflict extends Error {
  constructor(
    readonly at: KeyPath,
    readonly found: string,
  ) {
    super(`${at.map(String).join('.')} is ${found}`);
  }
}

const copyContainer = (value: unknown, nextKey: PropertyKey, at: KeyPath): Data | unknown[] => {
  if (Array.isArray(value)) return [...(value as unknown[])];
  if (isObject(value)) return { ...value };
  if (value === undefined || value === null) return typeof nextKey === 'number' ? [] : {};
  throw new PathConflict(
    at,
    `${typeof value === 'string' ? 'a string' : `${typeof value} ${JSON.stringify(value)}`}, not a mapping or list`,
  );
};

const assign = (
  container: Data | unknown[],
  key: PropertyKey,
  value: unknown,
  at: KeyPath,
): void => {
  if (Array.isArray(container)) {
    if (typeof key !== 'number')
      throw new PathConflict(at.slice(0, -1), `a list (use an index: ${String(key)} is not one)`);
    if (key > container.length)
      throw new PathConflict(
        at.slice(0, -1),
        `a list of ${container.length} (index ${key} would leave a gap)`,
      );
    container[key] = value;
  } else {
    container[String(key)] = value;
  }
};

/**
 * Sets exactly the value at `path` in a copy of `data` (env and flag overrides): objects and lists
 * on the way are kept, missing ones created; a number indexes a list (its length appends). Only
 * the leaf's origins are replaced. Throws `PathConflict` when a scalar is in the way.
 */
export const setAt = (
  data: Data,
  path: KeyPath,
  value: unknown,
  origins: Origins,
  origin: (path: KeyPath) => Origin,
): Data => {
  const root = { ...data };
  let node: Data | unknown[] = root;
  const exact: PropertyKey[] = [];
  path.forEach((raw, i) => {
    // `allowedPaths.0` indexes a list as `allowedPaths[0]` does.
    const key =
      Array.isArray(node) && typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
    exact.push(key);
    if (i === path.length - 1) return assign(node, key, value, exact);
    const below = Array.isArray(node) ? node[key as number] : node[String(key)];
    const copy = copyContainer(below, path[i + 1]!, exact);
    assign(node, key, copy, exact);
    node = copy;
  });
  dropOrigins(origins, exact);
  recordOrigins(value, exact, origins, origin);
  return root;
};

/**
 * Parses a key path as `--set` takes it: dot-separated keys, `[N]` list indexes, and `"…"` for a
 * key holding dots (`mcpServers."my.server".timeout`). A plain number between dots is a key
 * unless the value there turns out to be a list (see `setAt`'s callers).
 */
export const parseKeyPath = (text: string): PropertyKey[] | undefined => {
  const path: PropertyKey[] = [];
  const pattern = /\s*(?:"((?:[^"\\]|\\.)*)"|([^.[\]"]+)|\[(\d+)\])/y;
  let at = 0;
  let expectKey = true;
  while (at < text.length) {
    if (!expectKey && text[at] === '.') {
      at++;
      expectKey = true;
      continue;
    }
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (!match) return undefined;
    const [whole, quoted, plain, index] = match;
    if (index !== undefined) {
      if (expectKey) return undefined;
      path.push(Number(index));
    } else {
      if (!expectKey) return undefined;
      path.push(quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : plain!.trim());
    }
    at += whole.length;
    expectKey = false;
  }
  return path.length && !expectKey ? path : undefined;
};
