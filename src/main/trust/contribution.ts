import { sha256Hash } from '../../workers/shared/sha256.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import type { ParsedFile } from '../config/source.ts';
import type { Part } from './part.ts';
import { scriptParts } from './scripts.ts';

/** Everything a repository contributes that needs trust, and one digest over all of it. */
export interface Contribution {
  parts: Part[];
  digest: string;
}

type When = (value: unknown) => boolean;

/** Model fields that decide where prompts and keys go: an entry with any of them needs trust. */
const ROUTING = ['provider', 'baseUrl', 'apiKeyEnv', 'headers'];

const isOnlyDisable: When = (value) =>
  isObject(value) && Object.keys(value).length === 1 && value['enabled'] === false;

/**
 * What needs trust, by key path (`*` is any key). A server entry counts whole — command, env,
 * headers, oauth, `trust: true`, sandbox — except one that only switches a server off. A model
 * entry counts whole when it says where prompts and keys go (provider, URL, key, headers); one
 * that only tunes a model of yours (`model`, `temperature`…) does not. Tightening (a `deny`,
 * `ask`, a disabled tool) never needs trust. Sandbox settings count whatever their value (one
 * that tightens asks once, which errs on the safe side).
 */
const RULES: { path: string[]; kind: Part['kind']; when?: When }[] = [
  { path: ['mcpServers', '*'], kind: 'server', when: (v) => !isOnlyDisable(v) },
  {
    path: ['models', '*'],
    kind: 'setting',
    when: (v) => isObject(v) && ROUTING.some((k) => k in v),
  },
  {
    path: ['tools', 'allowedPaths'],
    kind: 'setting',
    when: (v) => !Array.isArray(v) || v.length > 0,
  },
  { path: ['tools', 'policy', '*'], kind: 'setting', when: (v) => v === 'allow' },
  {
    path: ['serve', 'clients', '*', 'policy', '*'],
    kind: 'setting',
    when: (v) => v === 'allow',
  },
  { path: ['tools', 'bash', 'sandbox'], kind: 'setting' },
  { path: ['tools', 'bash', 'network'], kind: 'setting' },
  { path: ['tools', 'bash', 'passEnv'], kind: 'setting' },
  { path: ['tools', 'bash', 'limits'], kind: 'setting' },
  { path: ['tools', 'fetch', 'allowPrivate'], kind: 'setting' },
  { path: ['mcp', 'sandboxDefault'], kind: 'setting' },
  // A language server entry runs a command (or changes what a built-in runs, or its options);
  // turning language servers on starts the user's own in a repository that turned them off.
  { path: ['lsp', '*'], kind: 'server', when: (v) => isObject(v) && !isOnlyDisable(v) },
  { path: ['lsp', 'enabled'], kind: 'setting', when: (v) => v === true },
  { path: ['hooks', '*'], kind: 'setting' },
  // The profile new sessions start with: a repository's could be wider than yours (build over plan).
  { path: ['agent', 'default'], kind: 'setting' },
];

const matches = (data: unknown, pattern: string[], at: string[] = []): [string[], unknown][] => {
  if (pattern.length === 0) return [[at, data]];
  if (!isObject(data)) return [];
  const [head, ...rest] = pattern;
  const keys = head === '*' ? Object.keys(data) : head! in data ? [head!] : [];
  return keys.flatMap((key) => matches(data[key], rest, [...at, key]));
};

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) =>
    isObject(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  );

/**
 * SHA-256 of a value's canonical JSON (keys sorted). node:crypto is loaded on the first digest
 * (~10 ms): a repository that contributes nothing, or one never trusted, needs none, and the
 * config commands read such configs many times a minute.
 */
export const digestOf = (value: unknown): string =>
  sha256Hash()
    .update(canonical(value ?? null))
    .digest('hex');

/** The parts of one repository layer (its `.niffler/config.yaml` or `.mcp.json`). */
const layerParts = (layer: ParsedFile): Part[] =>
  RULES.flatMap((rule) =>
    matches(layer.data, rule.path)
      .filter(([, value]) => value !== undefined && (rule.when?.(value) ?? true))
      .map(([path, value]) => ({
        key: `${layer.source.kind}:${path.join('.')}`,
        path,
        file: layer.source.file ?? layer.source.kind,
        line: layer.lineOf(path),
        value,
        kind: rule.kind,
      })),
  );

/**
 * What the repository's layers contribute, as written (call before `${VAR}` expansion), the
 * parts of its extension files (`extensionParts`) and — given `where` — the repository files
 * those run (`scriptParts`), by their content.
 */
export const repositoryContribution = (
  layers: readonly ParsedFile[],
  extensions: readonly Part[] = [],
  where?: { root: string; home: string },
): Contribution => {
  const own = [...layers.flatMap(layerParts), ...extensions];
  const scripts = where ? scriptParts(own, where.root, where.home) : [];
  const parts = [...own, ...scripts].sort((a, b) => a.key.localeCompare(b.key));
  let digest: string | undefined;
  return {
    parts,
    // Worked out when first asked (a trust record to compare with, `niffler trust`).
    get digest() {
      digest ??= digestOf(parts.map((p) => [p.key, p.value]));
      return digest;
    },
  };
};

/** `data` without the settings among `parts` that were found in it (servers stay). */
export const withoutSettings = (
  data: Record<string, unknown>,
  parts: readonly Part[],
): Record<string, unknown> => {
  const copy = structuredClone(data);
  for (const part of parts) {
    if (part.kind !== 'setting') continue;
    let node: unknown = copy;
    for (const key of part.path.slice(0, -1)) node = isObject(node) ? node[key] : undefined;
    if (isObject(node)) delete node[part.path.at(-1)!];
  }
  return copy;
};
