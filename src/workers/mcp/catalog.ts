import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListToolsResultSchema,
  type Prompt,
  type Resource,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/** What a server offers, every page of it. */
export interface Catalog {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
}

export type CatalogPart = keyof Catalog;

const MAX_PAGES = 1000;

/** Follows `nextCursor` to the end; stops on a cursor seen before (a looping server). */
const allPages = async <T>(
  fetch: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> => {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await fetch(cursor);
    items.push(...result.items);
    if (!result.nextCursor || seen.has(result.nextCursor)) break;
    seen.add(result.nextCursor);
    cursor = result.nextCursor;
  }
  return items;
};

const params = (cursor: string | undefined) => (cursor ? { cursor } : {});

/** The list request and result schema of each part; each part is also a server capability. */
const LISTS = {
  tools: { method: 'tools/list', schema: ListToolsResultSchema },
  prompts: { method: 'prompts/list', schema: ListPromptsResultSchema },
  resources: { method: 'resources/list', schema: ListResourcesResultSchema },
} as const;

/**
 * Lists one part of a server's catalog over every page. Uses `client.request` rather than
 * `client.listTools`, whose output-schema cache keeps only the last page; we validate ourselves.
 */
export const listPart = async <P extends CatalogPart>(
  client: Client,
  part: P,
  options: RequestOptions = {},
): Promise<Catalog[P]> => {
  if (!client.getServerCapabilities()?.[part]) return [];
  const { method, schema } = LISTS[part];
  const items = await allPages(async (cursor) => {
    const result: Record<string, unknown> & { nextCursor?: string | undefined } =
      await client.request({ method, params: params(cursor) }, schema, options);
    return { items: result[part] as unknown[], nextCursor: result.nextCursor };
  });
  return items as Catalog[P];
};

/** The whole catalog: tools, prompts and resources, for what the server declares. */
export const listCatalog = async (
  client: Client,
  options: RequestOptions = {},
): Promise<Catalog> => {
  const [tools, prompts, resources] = await Promise.all([
    listPart(client, 'tools', options),
    listPart(client, 'prompts', options),
    listPart(client, 'resources', options),
  ]);
  return { tools, prompts, resources };
};
