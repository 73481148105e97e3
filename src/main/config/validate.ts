import type { z } from 'zod';
import { ConfigSchema, PARSE_ONCE } from './schema.ts';
import { originsUnder, type Origin, type Origins } from './merge.ts';
import { describeValue, formatPath, formatPlace, type KeyPath, type ParsedFile } from './source.ts';
import type { Env } from '../paths.ts';

type Issue = z.core.$ZodIssue;

const valueAt = (data: unknown, path: KeyPath): unknown => {
  let node = data;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
};

/** The keys an object in the schema accepts at `path`, for "unknown key" messages. */
const keysAt = (path: KeyPath, root: z.ZodType = ConfigSchema): string[] => {
  let schema: unknown = root;
  for (const key of path) {
    schema = unwrap(schema);
    const def = (
      schema as {
        def?: {
          type?: string;
          valueType?: unknown;
          shape?: Record<string, unknown>;
          catchall?: unknown;
        };
      }
    ).def;
    if (def?.type === 'record') schema = def.valueType;
    else if (def?.type === 'object') schema = def.shape?.[String(key)] ?? def.catchall;
    else return [];
  }
  const def = (unwrap(schema) as { def?: { type?: string; shape?: Record<string, unknown> } }).def;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
};

const unwrap = (schema: unknown): unknown => {
  let current = schema as
    { def?: { type?: string; innerType?: unknown; in?: unknown } } | undefined;
  while (
    current?.def &&
    ['optional', 'default', 'prefault', 'nullable', 'pipe'].includes(current.def.type ?? '')
  ) {
    current = (current.def.innerType ?? current.def.in) as typeof current;
  }
  return current;
};

const expectedOf = (issue: Issue, found: unknown): string => {
  switch (issue.code) {
    case 'invalid_type': {
      const expected =
        issue.expected === 'object' || issue.expected === 'record'
          ? 'a mapping'
          : issue.expected === 'array'
            ? 'a list'
            : `a ${issue.expected}`;
      return `expected ${expected}, got ${describeValue(found)}`;
    }
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(found)}`;
    case 'too_small':
      return `expected ${issue.origin === 'number' ? 'a number' : issue.origin} ${issue.inclusive ? '>=' : '>'} ${String(issue.minimum)}, got ${describeValue(found)}`;
    case 'too_big':
      return `expected ${issue.origin === 'number' ? 'a number' : issue.origin} ${issue.inclusive ? '<=' : '<'} ${String(issue.maximum)}, got ${describeValue(found)}`;
    case 'invalid_format':
      return `${issue.message.startsWith('expected') ? issue.message : `expected a valid ${issue.format}`}, got ${describeValue(found)}`;
    default:
      return issue.message;
  }
};

/**
 * Where a mapping takes both settings and named entries (`lsp.enabled`, `lsp.typescript`), a
 * misspelled setting reads as an entry of the wrong type: the setting it was likely meant to be.
 */
const settingHint = (issue: Issue, schema?: z.ZodType): string => {
  if (issue.code !== 'invalid_type' || issue.expected !== 'object' || !issue.path.length) return '';
  const key = String(issue.path.at(-1));
  const hint = closest(key, keysAt(issue.path.slice(0, -1), schema));
  return hint && hint !== key ? `; did you mean "${hint}"?` : '';
};

const messageOf = (
  issue: Issue,
  found: unknown,
  place: (path: KeyPath) => string,
  schema?: z.ZodType,
): string => {
  if (issue.code !== 'unrecognized_keys')
    return `${place(issue.path)}: ${expectedOf(issue, found)}${settingHint(issue, schema)}`;
  const allowed = keysAt(issue.path, schema);
  return issue.keys
    .map((key) => {
      const hint = closest(key, allowed);
      return `${place([...issue.path, key])}: unknown key${hint ? `; did you mean "${hint}"?` : ''}${allowed.length ? ` expected one of: ${allowed.join(', ')}` : ''}`;
    })
    .join('\n');
};

/** The schema's issues with `data`, less the "needs command or url" that a misspelled key trips. */
const issuesOf = (data: unknown): Issue[] => {
  const result = ConfigSchema.safeParse(data, PARSE_ONCE);
  if (result.success) return [];
  const unknownAt = new Set(
    result.error.issues.filter((i) => i.code === 'unrecognized_keys').map((i) => i.path.join('.')),
  );
  return result.error.issues.filter((i) => i.code !== 'custom' || !unknownAt.has(i.path.join('.')));
};

/**
 * Checks what one file says, before layers merge: unknown keys and values of the wrong type or
 * range, each naming the file and line. What a file leaves out, and rules across keys (a server
 * needs `command` or `url`), are judged on the merged result by `validateMerged`.
 */
export const validateLayer = (layer: ParsedFile, env?: Env): string[] =>
  issuesOf(layer.data)
    .filter((issue) => issue.code !== 'custom')
    .flatMap((issue) => {
      const found = valueAt(layer.data, issue.path);
      if (issue.code !== 'unrecognized_keys' && found === undefined) return [];
      const place = (path: KeyPath) =>
        formatPlace(layer.source.file, layer.lineOf(path), path, env);
      return [messageOf(issue, found, place)];
    });

/**
 * Checks the merged configuration once. Each problem is placed where its value came from
 * (`origins`): the file:line, variable or flag that set it; a missing value is placed at what set
 * the entry around it, so `models.fast: { model: x }` over nothing names the file that wrote it.
 */
export const validateMerged = (
  data: Record<string, unknown>,
  origins: Origins,
  describe: (origin: Origin, path: KeyPath) => string,
): string[] => {
  // The nearest contribution at or above `path`, the last (highest-precedence) one there.
  const place = (path: KeyPath): string => {
    for (let at = path; ; at = at.slice(0, -1)) {
      const origin = originsUnder(origins, at).at(-1);
      if (origin) return describe(origin, path);
      if (at.length === 0) return formatPath(path);
    }
  };
  return issuesOf(data).map((issue) => {
    const found = valueAt(data, issue.path);
    const message = messageOf(issue, found, place);
    if (issue.code === 'unrecognized_keys' || found !== undefined) return message;
    const around = issue.path.slice(0, -1);
    const sources = [...new Set(originsUnder(origins, around).map((o) => describe(o, around)))];
    return `${message}; no file, variable or flag sets it${sources.length ? ` (the entry: ${sources.join(' and ')})` : ''}`;
  });
};

const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(
        row[j]! + 1,
        row[j - 1]! + 1,
        previous + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1),
      );
      previous = current;
    }
  }
  return row[b.length]!;
};

const closest = (key: string, allowed: string[]): string | undefined => {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of allowed) {
    const d = distance(key, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
};

/**
 * What is wrong with `data` against `schema` (an extension file's), one message per issue,
 * each placed by `place` (`file:line key`); empty when it is valid.
 */
export const schemaProblems = (
  schema: z.ZodType,
  data: unknown,
  place: (path: KeyPath) => string,
): string[] => {
  const result = schema.safeParse(data, PARSE_ONCE);
  if (result.success) return [];
  return result.error.issues.map((issue) =>
    messageOf(issue, valueAt(data, issue.path), place, schema),
  );
};
