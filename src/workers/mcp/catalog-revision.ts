import type { Catalog } from './catalog-types.ts';

/** How a server's live tools differ from the ones kept from an earlier run (by the server's names). */
export interface CatalogRevision {
  added: string[];
  removed: string[];
  /** Same name, another description, schema or annotations. */
  changed: string[];
}

/** How `live` differs from `kept` in its tools; undefined when they are the same. */
export const catalogRevision = (kept: Catalog, live: Catalog): CatalogRevision | undefined => {
  const before = new Map(kept.tools.map((tool) => [tool.name, JSON.stringify(tool)]));
  const after = new Map(live.tools.map((tool) => [tool.name, JSON.stringify(tool)]));
  const revision: CatalogRevision = {
    added: [...after.keys()].filter((name) => !before.has(name)),
    removed: [...before.keys()].filter((name) => !after.has(name)),
    changed: [...after]
      .filter(([name, text]) => before.has(name) && before.get(name) !== text)
      .map(([name]) => name),
  };
  return revision.added.length || revision.removed.length || revision.changed.length
    ? revision
    : undefined;
};
