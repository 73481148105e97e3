import type * as Zod from 'zod';
import type { ParseMemo } from './parse-memo.ts';

// The `zod` of the config commands' bundle (dist/config.cjs; scripts/build-options.mjs points
// `zod` here for niffler's own modules in that bundle only). Loading zod and building the config's
// schemas costs such a command ~30 ms, most of its run, though a config read again and again is
// the same config: so here a schema is only *recorded* as the modules build it (`z.string().min(1)`),
// and the real one is built, from the very same calls, the first time it is needed. A parse of
// plain JSON data (what YAML and JSON files give) that zod accepted once is kept in a memo
// (parse-memo.ts), keyed by the schema as recorded and the data, and answered from there; anything
// else — a first parse, data the memo does not hold, errors, every other use of a schema —
// goes to zod itself, so what a config gets, and every error it is told, is zod's.

type Real = typeof Zod.z;
type Schema = Zod.ZodType;

let provide: (() => Real) | undefined;
let real: Real | undefined;
let memo: ParseMemo | undefined;

/** How the bundle's entry gives this module the real zod (loaded on first use) and the memo. */
export const provideRealZod = (load: () => Real, parses?: ParseMemo): void => {
  provide = load;
  memo = parses;
};

/** Whether zod itself was needed in this run (a parse the memo did not hold, or another use). */
export const zodLoaded = (): boolean => real !== undefined;

const zod = (): Real => {
  if (!real) {
    if (!provide) throw new Error('lazy-zod: no zod was provided (provideRealZod)');
    real = provide();
  }
  return real;
};

/** Methods that make another schema from a schema: recorded, not run. */
const BUILDERS = new Set([
  'optional',
  'nullable',
  'nullish',
  'default',
  'prefault',
  'catch',
  'describe',
  'meta',
  'refine',
  'superRefine',
  'check',
  'transform',
  'pipe',
  'array',
  'or',
  'and',
  'brand',
  'readonly',
  'min',
  'max',
  'length',
  'regex',
  'positive',
  'nonnegative',
  'negative',
  'nonpositive',
  'int',
  'gt',
  'gte',
  'lt',
  'lte',
  'multipleOf',
  'finite',
  'extend',
  'merge',
  'pick',
  'omit',
  'partial',
  'required',
  'strict',
  'passthrough',
  'catchall',
  'strip',
  'nonempty',
  'trim',
  'toLowerCase',
  'toUpperCase',
  'startsWith',
  'endsWith',
  'includes',
]);

/** Functions of `z` that make a schema: recorded, not run (anything else goes to zod at once). */
const MAKERS = new Set([
  'string',
  'number',
  'boolean',
  'bigint',
  'null',
  'undefined',
  'unknown',
  'any',
  'never',
  'object',
  'strictObject',
  'looseObject',
  'record',
  'array',
  'tuple',
  'enum',
  'union',
  'discriminatedUnion',
  'intersection',
  'literal',
  'url',
  'email',
  'uuid',
  'optional',
  'nullable',
  'lazy',
]);

const RECORDED = Symbol('niffler.recorded-schema');

/**
 * A schema as recorded: what it is made from — `z.<maker>(args)`, or another recorded schema's
 * `<method>(args)` — and, once needed, the schema itself and a text of exactly how it is made.
 */
interface Recorded {
  readonly from: Recorded | string;
  readonly method: string;
  readonly args: unknown[];
  built?: Schema;
  /** The text of how it is made (`textOf`), once a parse asked. */
  text?: string;
  parse?: (data: unknown, options?: unknown) => unknown;
  safeParse?: (data: unknown, options?: unknown) => unknown;
}

const recordedOf = (value: unknown): Recorded | undefined =>
  (typeof value === 'object' || typeof value === 'function') && value !== null
    ? ((value as Record<symbol, Recorded | undefined>)[RECORDED] ?? undefined)
    : undefined;

/** The real schema of `recorded`, built on first need from the very calls the modules made. */
const built = (recorded: Recorded): Schema => {
  if (!recorded.built) {
    const { from, method, args } = recorded;
    const target = (typeof from === 'string' ? makers(from) : built(from)) as unknown as Record<
      string,
      (...a: unknown[]) => Schema
    >;
    recorded.built = target[method]!(...args.map(realArgs));
  }
  return recorded.built;
};

/** Arguments with every recorded schema in them built (plain objects and arrays copied). */
const realArgs = (value: unknown): unknown => {
  const recorded = recordedOf(value);
  if (recorded) return built(recorded);
  if (Array.isArray(value)) return value.map(realArgs);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, realArgs(v)]));
  return value;
};

/**
 * The text of exactly how `recorded` is made (see `Recorded`), worked out once per schema (a
 * config schema's is a few kilobytes): what the memo knows the schema by.
 */
const textOf = (recorded: Recorded): string => {
  if (recorded.text === undefined) {
    const { from, method, args } = recorded;
    const base = typeof from === 'string' ? from : textOf(from);
    recorded.text = `${base}.${method}(${args.map(argText).join(',')})`;
  }
  return recorded.text;
};

/** A text of an argument that tells apart any two that could build different schemas. */
const argText = (value: unknown): string => {
  const recorded = recordedOf(value);
  if (recorded) return textOf(recorded);
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return `fn(${value.toString()})`;
  if (value instanceof RegExp) return `re(${value.toString()})`;
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return `[${value.map(argText).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${argText(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
};

/** `parse` (or, `safe`, `safeParse`) of a recorded schema: from the memo when it holds the parse. */
const parser =
  (recorded: Recorded, safe: boolean) =>
  (data: unknown, options?: unknown): unknown => {
    const key = memo?.key(textOf(recorded), data, options);
    const hit = key === undefined ? undefined : memo?.get(key);
    if (hit !== undefined) return safe ? { success: true, data: hit } : hit;
    const schema = built(recorded);
    if (!safe) {
      const output = schema.parse(data, options as never);
      if (key !== undefined) memo?.set(key, output);
      return output;
    }
    const result = schema.safeParse(data, options as never);
    if (result.success && key !== undefined) memo?.set(key, result.data);
    return result;
  };

const OBJECT_MAKERS = new Set(['object', 'strictObject', 'looseObject']);

/** The shape `z.object(shape)` (or strict, loose) was made with; undefined for anything else. */
const shapeOf = (recorded: Recorded): Record<string, unknown> | undefined => {
  const [shape] = recorded.args;
  return recorded.from === 'z' &&
    OBJECT_MAKERS.has(recorded.method) &&
    shape !== null &&
    typeof shape === 'object' &&
    Object.getPrototypeOf(shape) === Object.prototype
    ? (shape as Record<string, unknown>)
    : undefined;
};

/** What a recorded schema's stand-in does: records builders, serves parses, else builds. */
const handler: ProxyHandler<{ recorded: Recorded }> = {
  get: ({ recorded }, property) => {
    if (property === RECORDED) return recorded;
    if (property === 'parse') return (recorded.parse ??= parser(recorded, false));
    if (property === 'safeParse') return (recorded.safeParse ??= parser(recorded, true));
    // An object schema's `shape` is the object it was made with (what checkFrontmatter reads to
    // tell the keys a file may have): no need to build it.
    if (property === 'shape' && shapeOf(recorded)) return shapeOf(recorded);
    if (typeof property === 'string' && BUILDERS.has(property))
      return (...args: unknown[]) => recordedSchema({ from: recorded, method: property, args });
    const schema = built(recorded) as unknown as Record<PropertyKey, unknown>;
    const value = schema[property];
    return typeof value === 'function' ? (value as () => unknown).bind(schema) : value;
  },
  has: ({ recorded }, property) => property in (built(recorded) as object),
  ownKeys: ({ recorded }) => Reflect.ownKeys(built(recorded)),
  getOwnPropertyDescriptor: ({ recorded }, property) => {
    const descriptor = Reflect.getOwnPropertyDescriptor(built(recorded), property);
    return descriptor ? { ...descriptor, configurable: true } : undefined;
  },
  getPrototypeOf: ({ recorded }) => Object.getPrototypeOf(built(recorded)) as object | null,
};

/** A recorded schema's stand-in: it records what builds on it and builds itself when used. */
const recordedSchema = (recorded: Recorded): Schema =>
  new Proxy({ recorded }, handler) as unknown as Schema;

/** The real namespace a maker path (`z`, `z.coerce`) stands for. */
const makers = (path: string): Record<string, unknown> =>
  (path === 'z' ? zod() : (zod() as unknown as Record<string, unknown>)['coerce']) as Record<
    string,
    unknown
  >;

/** `z`, or `z.coerce`, as recorded. */
const namespace = (path: string): unknown =>
  new Proxy(
    {},
    {
      get: (_target, property) => {
        if (typeof property !== 'string') return makers(path)[property as never];
        if (property === 'coerce' && path === 'z') return namespace('z.coerce');
        if (MAKERS.has(property))
          return (...args: unknown[]) => recordedSchema({ from: path, method: property, args });
        const value = makers(path)[property];
        return typeof value === 'function'
          ? (...args: unknown[]) => (value as (...a: unknown[]) => unknown)(...args.map(realArgs))
          : value;
      },
    },
  );

/** Stands for zod's `z` in the config commands' bundle (see above). */
export const z = namespace('z') as Real;
