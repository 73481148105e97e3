import type { CacheableRequestOptions, Client, Tool } from '@modelcontextprotocol/client';
import type { Catalog, CatalogPart } from './catalog-types.ts';
import { catalogProblems, droppedToolProblems } from './problems.ts';
import type { ProtocolTrace } from './trace.ts';

export const EMPTY_CATALOG: Catalog = { tools: [], prompts: [], resources: [], templates: [] };

/** Pages of one list the SDK walks before it gives up on a server whose cursor never ends. */
export const MAX_PAGES = 1000;

/** The capability each part needs, and the SDK's walk over every page of it. */
const LISTS: {
  [P in CatalogPart]: {
    capability: 'tools' | 'prompts' | 'resources';
    list: (client: Client, options: CacheableRequestOptions) => Promise<Catalog[P]>;
  };
} = {
  tools: { capability: 'tools', list: async (c, o) => (await c.listTools(undefined, o)).tools },
  prompts: {
    capability: 'prompts',
    list: async (c, o) => (await c.listPrompts(undefined, o)).prompts,
  },
  resources: {
    capability: 'resources',
    list: async (c, o) => (await c.listResources(undefined, o)).resources,
  },
  templates: {
    capability: 'resources',
    // Optional even where resources are offered: a server without templates may not answer.
    list: (c, o) =>
      c.listResourceTemplates(undefined, o).then(
        (r) => r.resourceTemplates,
        () => [],
      ),
  },
};

/**
 * Lists one part of a server's catalog over every page, through the SDK's aggregating walk: it
 * honours the server's `ttlMs` cache hint (a fresh list comes from the client's response cache),
 * and leaves out tools whose `x-mcp-header` annotations are invalid (SEP-2243).
 */
const listPart = <P extends CatalogPart>(
  client: Client,
  part: P,
  options: CacheableRequestOptions = {},
): Promise<Catalog[P]> => {
  const { capability, list } = LISTS[part];
  if (!client.getServerCapabilities()?.[capability]) return Promise.resolve([]);
  return list(client, options);
};

/** The whole catalog, for what the server declares. */
export const listCatalog = async (
  client: Client,
  options: CacheableRequestOptions = {},
): Promise<Catalog> => {
  const [tools, prompts, resources, templates] = await Promise.all([
    listPart(client, 'tools', options),
    listPart(client, 'prompts', options),
    listPart(client, 'resources', options),
    listPart(client, 'templates', options),
  ]);
  return { tools, prompts, resources, templates };
};

/**
 * How long after a list_changed the catalog is listed again; notifications within it share one
 * listing. A server sends a burst in one go, but a loaded machine may deliver it in pieces.
 */
const REFRESH_DEBOUNCE_MS = 150;

/**
 * Re-lists parts of a catalog after `list_changed` notifications: debounced per part, each
 * listing bypassing the response cache the notification made stale.
 */
class CatalogRefresher {
  private readonly timers = new Map<CatalogPart, NodeJS.Timeout>();

  constructor(
    private readonly refresh: (part: CatalogPart) => void,
    private readonly debounceMs = REFRESH_DEBOUNCE_MS,
  ) {}

  /** A change of `part` was announced: list it again once the burst is over. */
  schedule(part: CatalogPart): void {
    clearTimeout(this.timers.get(part));
    this.timers.set(
      part,
      setTimeout(() => {
        const timer = this.timers.get(part);
        // One turn of the loop first: a thread that was kept off the CPU past the window runs its
        // timers before reading what arrived meanwhile, and the rest of the burst may be there.
        // A notification read in that turn schedules anew, and this refresh gives way to it.
        setImmediate(() => {
          if (this.timers.get(part) !== timer) return;
          this.timers.delete(part);
          this.refresh(part);
        });
      }, this.debounceMs),
    );
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

/** What a `CatalogKeeper` tells its connection. */
interface CatalogHooks {
  changed: (part: CatalogPart) => void;
  note: (problem: string) => void;
  log: (text: string) => void;
}

/** The catalog part each list method fills. */
const PART_OF: Record<string, CatalogPart> = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'templates',
};

/**
 * A connected server's catalog as niffler holds it: set when a link opens, listed again on
 * `list_changed` (debounced), once its `ttlMs` cache hint has run out and it is used, or on
 * demand; with the problems found in each tools listing — remote `$ref`s, and tools the SDK left
 * out for invalid `x-mcp-header` annotations. What the server sent (the names, the hints) is read
 * from its answers as the protocol trace sees them.
 */
export class CatalogKeeper {
  catalog: Catalog = EMPTY_CATALOG;
  private client: Client | undefined;
  private indexed: Catalog | undefined;
  private byName = new Map<string, Tool>();
  private readonly refresher = new CatalogRefresher((part) => void this.refresh(part));
  /** Tool names of the tools/list answers since `watchToolListing`. */
  private listed: string[] | undefined;
  /** When each part stops being fresh, by the server's `ttlMs` (absent or 0: no hint). */
  private readonly expires = new Map<CatalogPart, number>();

  constructor(
    private readonly hooks: CatalogHooks,
    trace: ProtocolTrace,
  ) {
    trace.onAnswer = (method, result) => this.answered(method, result);
  }

  private answered(method: string, result: unknown): void {
    const part = PART_OF[method];
    if (!part) return;
    const { ttlMs, tools } = result as { ttlMs?: unknown; tools?: Tool[] };
    // The first page's hint stands for the list (later pages are the same listing).
    if (typeof ttlMs === 'number' && ttlMs > 0 && !this.expires.has(part))
      this.expires.set(part, Date.now() + ttlMs);
    if (part === 'tools' && this.listed) for (const t of tools ?? []) this.listed.push(t.name);
  }

  /**
   * The catalog is about to be used: a part whose `ttlMs` has run out is listed again (in the
   * background; the one held serves meanwhile).
   */
  freshen(now = Date.now()): void {
    for (const [part, at] of this.expires)
      if (at <= now) {
        this.expires.delete(part);
        void this.refresh(part);
      }
  }

  /** Until when each part's listing is fresh by the server's cache hint (`ttlMs`), where it gave one. */
  freshness(): Partial<Record<CatalogPart, number>> {
    return Object.fromEntries(this.expires);
  }

  /** A tool by its own name, looked up in a map rebuilt only when the catalog changes. */
  tool(name: string): Tool | undefined {
    if (this.indexed !== this.catalog) {
      this.indexed = this.catalog;
      this.byName = new Map(this.catalog.tools.map((t) => [t.name, t]));
    }
    return this.byName.get(name);
  }

  /** Starts collecting the tool names the server sends; returns what was collected so far. */
  watchToolListing(): () => string[] {
    const listed: string[] = [];
    this.listed = listed;
    this.expires.delete('tools');
    return () => {
      if (this.listed === listed) this.listed = undefined;
      return listed.splice(0);
    };
  }

  /** The catalog of a link just opened (its tools listing watched from before it opened). */
  attach(client: Client, catalog: Catalog, listed: string[]): void {
    this.client = client;
    this.catalog = catalog;
    for (const problem of droppedToolProblems(listed, catalog.tools)) this.hooks.note(problem);
  }

  /** The link closed: no refresh of it lands any more. */
  detach(clear: boolean): void {
    this.client = undefined;
    this.refresher.clear();
    this.expires.clear();
    if (clear) this.catalog = EMPTY_CATALOG;
  }

  /** `list_changed` for `part` (resources change their templates too). */
  changed(part: CatalogPart): void {
    this.refresher.schedule(part);
    if (part === 'resources') this.refresher.schedule('templates');
  }

  /**
   * Lists `part` again now, past the response cache (a change was announced, or its hint ran out:
   * this keeper honours the hints itself), and resolves once it has landed.
   */
  async refresh(part: CatalogPart, signal?: AbortSignal): Promise<void> {
    const client = this.client;
    if (!client) return;
    const listed = part === 'tools' ? this.watchToolListing() : () => [];
    this.expires.delete(part);
    try {
      const items = await listPart(client, part, {
        cacheMode: 'refresh',
        ...(signal ? { signal } : {}),
      });
      if (client !== this.client) return;
      if (part === 'tools') {
        const tools = items as Tool[];
        const problems = [
          ...droppedToolProblems(listed(), tools),
          ...catalogProblems({ ...EMPTY_CATALOG, tools }),
        ];
        for (const problem of problems) this.hooks.note(problem);
      }
      this.catalog = { ...this.catalog, [part]: items };
      this.hooks.changed(part);
    } catch (error) {
      this.hooks.log(`refreshing ${part} failed: ${(error as Error).message}`);
    }
  }
}
