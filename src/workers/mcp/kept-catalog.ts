import { createHash } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { McpEvent, McpServerSpec, McpWorkerData } from '../protocol/mcp.ts';
import { writeAtomic } from '../shared/atomic.ts';
import { readStateFile } from '../shared/state-file.ts';
import type { Catalog, CatalogPart } from './catalog-types.ts';

// Each server's last catalog, kept on disk so that a cold start can build its first request while
// the server is still starting (see ARCHITECTURE.md, "the kept catalog"). One private file per
// server (0600, in a 0700 directory per workspace, written whole through atomic.ts), keyed by a
// digest of the server's definition and niffler's version: a definition that changed, another
// niffler, or a file that is not what niffler wrote (corrupt, cut short, a symlink, another
// user's, writable by others) is ignored with a log line, and the server is waited for as
// before. This module loads none of the MCP client code: the worker's entry reads it before the
// SDK has loaded.

/** The format of a kept catalog file; another number is ignored. */
const FORMAT = 1;

/** Catalogs larger than this are not kept (nor read). */
const MAX_BYTES = 8 * 1024 * 1024;

/** What a kept catalog holds besides the catalog itself. */
export interface KeptCatalog {
  catalog: Catalog;
  serverInfo: { name: string; version: string } | null;
  instructions: string | null;
  /** Epoch ms it was written. */
  savedAt: number;
  /** Per part, until when the server's own cache hint (`ttlMs`) let its listing be used. */
  freshUntil?: Partial<Record<CatalogPart, number>>;
}

type Log = (level: 'info' | 'warn', msg: string, data: Record<string, unknown>) => void;

/**
 * The digest a kept catalog is filed under: what decides which program or endpoint answers and
 * what it is given — transport, command, arguments, working directory, the names (not the values)
 * of its environment variables and headers, its URL — and niffler's version.
 */
const catalogDigest = (spec: McpServerSpec, version: string): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        version,
        spec.transport,
        spec.command ?? null,
        spec.args ?? [],
        spec.workingDir ?? null,
        Object.keys(spec.env ?? {}).sort(),
        spec.url ?? null,
        Object.keys(spec.headers ?? {})
          .map((name) => name.toLowerCase())
          .sort(),
      ]),
    )
    .digest('hex');

/** The file of `server` (any name: made safe, and told apart by a hash of it). */
const fileName = (server: string): string =>
  `${server.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 48)}-${createHash('sha256').update(server).digest('hex').slice(0, 12)}.json`;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isListOf = (value: unknown, keys: string[]): boolean =>
  Array.isArray(value) &&
  value.every((item) => isObject(item) && keys.every((key) => typeof item[key] === 'string'));

/** Why `catalog` is not one niffler wrote, or undefined when it is. */
const catalogProblem = (catalog: unknown): string | undefined => {
  if (!isObject(catalog)) return 'it holds no catalog';
  if (
    !isListOf(catalog['tools'], ['name']) ||
    !(catalog['tools'] as unknown[]).every((tool) =>
      isObject((tool as Record<string, unknown>)['inputSchema']),
    )
  )
    return 'its tools are not a list of named tools with input schemas';
  if (!isListOf(catalog['prompts'], ['name'])) return 'its prompts are not a list of named prompts';
  if (!isListOf(catalog['resources'], ['uri', 'name']))
    return 'its resources are not a list of resources';
  if (!isListOf(catalog['templates'], ['uriTemplate', 'name']))
    return 'its resource templates are not a list of templates';
  return undefined;
};

/** The fields of a kept file other than the catalog, or why they are wrong. */
const headerProblem = (
  data: Record<string, unknown>,
  version: string,
  digest: string,
): string | undefined => {
  if (data['format'] !== FORMAT) return `it has format ${String(data['format'])}, not ${FORMAT}`;
  if (data['niffler'] !== version)
    return `it was written by niffler ${String(data['niffler'])}, this is ${version}`;
  if (data['digest'] !== digest) return 'the server definition changed since it was written';
  if (typeof data['savedAt'] !== 'number') return 'it has no time of writing';
  const info = data['serverInfo'];
  if (
    info !== null &&
    !(isObject(info) && typeof info['name'] === 'string' && typeof info['version'] === 'string')
  )
    return 'its serverInfo is not a name and a version';
  if (data['instructions'] !== null && typeof data['instructions'] !== 'string')
    return 'its instructions are not text';
  return undefined;
};

/** A part whose listing the server's cache hint no longer covers, if any. */
const stalePart = (freshUntil: unknown, now: number): string | undefined => {
  if (freshUntil === undefined) return undefined;
  if (!isObject(freshUntil)) return 'its cache hints are not readable';
  for (const [part, until] of Object.entries(freshUntil))
    if (typeof until !== 'number' || until <= now) return part;
  return undefined;
};

/**
 * The kept catalogs of one workspace, in `dir`; none are read or written without a `dir` (tests
 * of the worker alone). Reading never throws: what cannot be used is logged and ignored.
 */
export class KeptCatalogs {
  /** What was last read or written per server (but its time): a save of the same is skipped. */
  readonly #bodies = new Map<string, string>();
  /** What each definition's read gave (read once: the worker's entry and its manager both ask). */
  readonly #reads = new Map<string, KeptCatalog | undefined>();
  #failing = false;

  constructor(
    private readonly dir: string | undefined,
    private readonly version: string,
    private readonly log: Log,
  ) {}

  /** The kept catalog of `spec`'s server, when one for exactly this definition can be used. */
  read(spec: McpServerSpec, now = Date.now()): KeptCatalog | undefined {
    const key = `${spec.name}\u0000${catalogDigest(spec, this.version)}`;
    if (!this.#reads.has(key)) this.#reads.set(key, this.#read(spec, now));
    return this.#reads.get(key);
  }

  #read(spec: McpServerSpec, now: number): KeptCatalog | undefined {
    if (!this.dir) return undefined;
    const file = path.join(this.dir, fileName(spec.name));
    const ignore = (why: string): undefined => {
      this.log(
        'warn',
        `the kept catalog of server "${spec.name}" is ignored: ${why}; it is waited for as on a first start`,
        { server: spec.name, file },
      );
      return undefined;
    };
    const read = readStateFile(file, MAX_BYTES);
    if (read.kind === 'missing') return undefined;
    if (read.kind === 'refused') return ignore(read.why);
    let data: unknown;
    try {
      data = JSON.parse(read.text);
    } catch {
      return ignore('it is not valid JSON (corrupt or cut short)');
    }
    if (!isObject(data)) return ignore('it is not a JSON object');
    const problem =
      headerProblem(data, this.version, catalogDigest(spec, this.version)) ??
      catalogProblem(data['catalog']);
    if (problem) return ignore(problem);
    const stale = stalePart(data['freshUntil'], now);
    if (stale) return ignore(`the server's cache hint (ttlMs) for its ${stale} has run out`);
    const { savedAt: _savedAt, ...body } = data;
    this.#bodies.set(spec.name, JSON.stringify(body));
    return {
      catalog: data['catalog'] as Catalog,
      serverInfo: data['serverInfo'] as KeptCatalog['serverInfo'],
      instructions: data['instructions'] as string | null,
      savedAt: data['savedAt'] as number,
      ...(data['freshUntil'] ? { freshUntil: data['freshUntil'] } : {}),
    };
  }

  /**
   * Keeps what `spec`'s server now offers, unless the file already holds exactly that. Written
   * in the background; a failure is logged once and costs only the next cold start its head start.
   */
  save(spec: McpServerSpec, kept: Omit<KeptCatalog, 'savedAt'>): void {
    const dir = this.dir;
    if (!dir) return;
    const body = {
      format: FORMAT,
      niffler: this.version,
      digest: catalogDigest(spec, this.version),
      serverInfo: kept.serverInfo,
      instructions: kept.instructions,
      ...(kept.freshUntil && Object.keys(kept.freshUntil).length
        ? { freshUntil: kept.freshUntil }
        : {}),
      catalog: kept.catalog,
    };
    const same = JSON.stringify(body);
    if (this.#bodies.get(spec.name) === same) return;
    const text = JSON.stringify({ ...body, savedAt: Date.now() });
    if (text.length > MAX_BYTES) return;
    this.#bodies.set(spec.name, same);
    const file = path.join(dir, fileName(spec.name));
    void mkdir(dir, { recursive: true, mode: 0o700 })
      .then(() => writeAtomic(file, text, 0o600))
      .then(
        () => (this.#failing = false),
        (error: unknown) => {
          this.#bodies.delete(spec.name);
          if (this.#failing) return;
          this.#failing = true;
          this.log('warn', 'a server catalog could not be kept', {
            server: spec.name,
            file,
            error: (error as Error).message,
          });
        },
      );
  }

  /** Removes the kept catalogs of servers no longer configured (`servers`: those that are). */
  prune(servers: readonly string[]): void {
    if (!this.dir) return;
    const wanted = new Set(servers.map(fileName));
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names)
      if (name.endsWith('.json') && !wanted.has(name))
        rmSync(path.join(this.dir, name), { force: true });
  }
}

/** The kept catalogs of the worker's workspace, logging through its `log` events. */
export const keptCatalogs = (
  data: Pick<McpWorkerData, 'catalogsDir' | 'version'>,
  post: (event: Extract<McpEvent, { type: 'log' }>) => void,
): KeptCatalogs =>
  new KeptCatalogs(data.catalogsDir, data.version ?? '', (level, msg, fields) =>
    post({ type: 'log', level, msg, data: fields }),
  );
