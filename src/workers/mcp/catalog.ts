import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
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

/**
 * Lists one part of a server's catalog over every page. Uses `client.request` rather than
 * `client.listTools`, whose output-schema cache keeps only the last page; we validate ourselves.
 */
export const listPart = async (
  client: Client,
  part: CatalogPart,
  signal?: AbortSignal,
): Promise<Catalog[CatalogPart]> => {
  const caps = client.getServerCapabilities() ?? {};
  const options = signal ? { signal } : {};
  switch (part) {
    case 'tools':
      if (!caps.tools) return [];
      return allPages(async (cursor) => {
        const r = await client.request(
          { method: 'tools/list', params: params(cursor) },
          ListToolsResultSchema,
          options,
        );
        return { items: r.tools, nextCursor: r.nextCursor };
      });
    case 'prompts':
      if (!caps.prompts) return [];
      return allPages(async (cursor) => {
        const r = await client.request(
          { method: 'prompts/list', params: params(cursor) },
          ListPromptsResultSchema,
          options,
        );
        return { items: r.prompts, nextCursor: r.nextCursor };
      });
    case 'resources':
      if (!caps.resources) return [];
      return allPages(async (cursor) => {
        const r = await client.request(
          { method: 'resources/list', params: params(cursor) },
          ListResourcesResultSchema,
          options,
        );
        return { items: r.resources, nextCursor: r.nextCursor };
      });
  }
};

/** The whole catalog: tools, prompts and resources, for what the server declares. */
export const listCatalog = async (client: Client, signal?: AbortSignal): Promise<Catalog> => {
  const [tools, prompts, resources] = await Promise.all([
    listPart(client, 'tools', signal) as Promise<Tool[]>,
    listPart(client, 'prompts', signal) as Promise<Prompt[]>,
    listPart(client, 'resources', signal) as Promise<Resource[]>,
  ]);
  return { tools, prompts, resources };
};
