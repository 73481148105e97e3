import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { readStateFile, writeStateFile } from '../../workers/shared/state-file.ts';

// The parses zod accepted, for the config commands' bundle (see lazy-zod.ts): per schema (as
// recorded) and data, the output zod gave. Only plain JSON goes in — objects, arrays, strings,
// finite numbers, booleans, null — both the data and the output, so that equal text is equal
// data. Kept in one private file per build of the bundle under $NIFFLER_HOME/cache (0600, written
// whole; read only if it is ours and nobody else may write it), the most recently used first: a
// new build, or a file that cannot be read, starts empty.

/** Parses kept, at most (a config, its layers and its hooks are a few per workspace). */
const MAX_ENTRIES = 64;
const MAX_BYTES = 4 * 1024 * 1024;

/** `value` as JSON text when it is plain JSON data (see above); undefined otherwise. */
export const plainJson = (value: unknown): string | undefined => {
  let plain = true;
  const check = (v: unknown, depth: number): void => {
    if (!plain) return;
    if (depth > 64) plain = false;
    else if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
    else if (typeof v === 'number') plain = Number.isFinite(v) && !Object.is(v, -0);
    else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (!(i in v)) plain = false;
        check(v[i], depth + 1);
      }
    } else if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      for (const item of Object.values(v)) check(item, depth + 1);
      if (Object.getOwnPropertySymbols(v).length) plain = false;
    } else plain = false;
  };
  check(value, 0);
  return plain ? JSON.stringify(value) : undefined;
};

export class ParseMemo {
  #entries: Map<string, string> | undefined;
  /** The schemas' texts (see lazy-zod.ts), each kept once: keys name them by their index. */
  #schemas: string[] = [];
  #schemaIndex = new Map<string, number>();
  #changed = false;

  /** `file`: where the memo of this `build` lives. */
  constructor(
    private readonly file: string,
    private readonly build: string,
  ) {}

  /** The key of a parse of `data` (with `options`) by the schema whose text is `schema`. */
  key(schema: string, data: unknown, options: unknown): string | undefined {
    const text = plainJson(data);
    const opts = options === undefined ? '' : plainJson(options);
    if (text === undefined || opts === undefined) return undefined;
    this.#load();
    let index = this.#schemaIndex.get(schema);
    if (index === undefined) {
      index = this.#schemas.push(schema) - 1;
      this.#schemaIndex.set(schema, index);
    }
    return `${index} ${opts} ${text}`;
  }

  /** What zod gave for the parse `key`, as a new copy; undefined when not kept. */
  get(key: string): unknown {
    const entries = this.#load();
    const output = entries.get(key);
    if (output === undefined) return undefined;
    // Most recently used last (the first go when the memo is full).
    entries.delete(key);
    entries.set(key, output);
    return JSON.parse(output) as unknown;
  }

  /** Keeps `output` of the parse `key` (plain JSON only). */
  set(key: string, output: unknown): void {
    const text = plainJson(output);
    if (text === undefined) return;
    const entries = this.#load();
    entries.delete(key);
    entries.set(key, text);
    while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    this.#changed = true;
  }

  /** Writes the memo when a parse was added (a failure is only a slower next run). */
  save(): void {
    if (!this.#changed || !this.#entries) return;
    // Only the schemas some kept parse names (by index: renumbered as they are written).
    const used = new Map<number, number>();
    const entries = [...this.#entries].map(([key, output]) => {
      const space = key.indexOf(' ');
      const index = Number(key.slice(0, space));
      if (!used.has(index)) used.set(index, used.size);
      return [`${used.get(index)}${key.slice(space)}`, output];
    });
    const schemas = [...used.keys()].map((index) => this.#schemas[index]);
    const text = JSON.stringify({ build: this.build, schemas, entries });
    if (text.length > MAX_BYTES) return;
    try {
      writeStateFile(this.file, text);
      this.#changed = false;
      if (!this.#loadedFile) pruneOthers(this.file);
    } catch {
      // A read-only or full home: the next run parses with zod again.
    }
  }

  /** Whether this build's memo was there to read (else this run is a new build's first). */
  #loadedFile = false;

  #load(): Map<string, string> {
    if (this.#entries) return this.#entries;
    this.#entries = new Map();
    const read = readStateFile(this.file, MAX_BYTES);
    if (read.kind !== 'text') return this.#entries;
    this.#loadedFile = true;
    try {
      const data = JSON.parse(read.text) as {
        build?: unknown;
        schemas?: unknown;
        entries?: unknown;
      };
      if (data.build !== this.build || !Array.isArray(data.schemas) || !Array.isArray(data.entries))
        return this.#entries;
      for (const schema of data.schemas) {
        if (typeof schema !== 'string') return this.#entries;
        this.#schemaIndex.set(schema, this.#schemas.push(schema) - 1);
      }
      for (const entry of data.entries)
        if (Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string')
          this.#entries.set(entry[0], entry[1]);
    } catch {
      // Not ours, or cut short: an empty memo.
    }
    return this.#entries;
  }
}

/** Memos kept of other builds (several installs may share a home), at most; the oldest go. */
const OTHER_BUILDS = 3;

/** Removes the memos of builds other than `file`'s but the most recent few. */
const pruneOthers = (file: string): void => {
  const dir = path.dirname(file);
  try {
    const others = readdirSync(dir)
      .filter((name) => name.endsWith('.json') && name !== path.basename(file))
      .map((name) => ({ name, at: statSync(path.join(dir, name)).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const { name } of others.slice(OTHER_BUILDS))
      rmSync(path.join(dir, name), { force: true });
  } catch {
    // Nothing to prune, or not ours to: the memos are small.
  }
};
