import type { Tool } from '@modelcontextprotocol/client';
import type { Catalog } from './catalog-types.ts';

/** Problems kept per server for `mcp status`, newest last. */
const KEPT = 8;

/** `$ref`s in `schema` that point outside it (a URL or another file); never fetched. */
const externalRefs = (schema: unknown, found = new Set<string>(), depth = 0): Set<string> => {
  if (!schema || typeof schema !== 'object' || depth > 32 || found.size > 4) return found;
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) found.add(value);
    else externalRefs(value, found, depth + 1);
  }
  return found;
};

/** What is wrong with a catalog that niffler works around: tool schemas with remote `$ref`s. */
export const catalogProblems = (catalog: Catalog): string[] =>
  catalog.tools.flatMap((tool) => {
    const refs = [...externalRefs(tool.outputSchema, externalRefs(tool.inputSchema))];
    return refs.length
      ? [
          `tool "${tool.name}" has a schema that refers to ${refs.join(', ')} ($ref); niffler does not fetch it, so the reference stays unresolved`,
        ]
      : [];
  });

/**
 * Tools the server listed that the SDK left out of `tools/list` because their `x-mcp-header`
 * annotations are invalid (SEP-2243): `listed` is what the server sent, `kept` what remains.
 */
export const droppedToolProblems = (listed: Iterable<string>, kept: Tool[]): string[] => {
  const names = new Set(kept.map((t) => t.name));
  return [...new Set(listed)]
    .filter((name) => !names.has(name))
    .map(
      (name) =>
        `tool "${name}" left out: its x-mcp-header annotation is invalid (SEP-2243); the server must fix its input schema`,
    );
};

/** A bounded list of a server's recent problems (the same message is kept once, refreshed). */
export class Problems {
  private items: { message: string; at: number }[] = [];

  add(message: string): boolean {
    const known = this.items.some((p) => p.message === message);
    this.items = [...this.items.filter((p) => p.message !== message), { message, at: Date.now() }];
    this.items = this.items.slice(-KEPT);
    return !known;
  }

  clear(): void {
    this.items = [];
  }

  list(): { message: string; at: number }[] {
    return this.items.map((p) => ({ ...p }));
  }
}
