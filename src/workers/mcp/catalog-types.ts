import type { Prompt, Resource, ResourceTemplateType, Tool } from '@modelcontextprotocol/client';

/** What a server offers, every page of it. */
export interface Catalog {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  templates: ResourceTemplateType[];
}

export type CatalogPart = keyof Catalog;
