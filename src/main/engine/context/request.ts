import type { LoadedConfig } from '../../extensions/workspace-config.ts';
import type { ToolEntry, ToolTable } from '../tool-calls.ts';
import {
  planTools,
  searchResultText,
  searchTools,
  TOOL_SEARCH,
  type SearchableTool,
  type ToolPlan,
} from './tool-search.ts';

/** The tools of a request, and the table that answers their calls (`tool_search` included). */
interface PlannedTools {
  plan: ToolPlan;
  table: ToolTable;
}

const searchable = (entry: ToolEntry): SearchableTool | undefined =>
  entry.kind === 'engine'
    ? undefined
    : { kind: entry.kind, spec: entry.spec, ...(entry.server ? { server: entry.server } : {}) };

/**
 * The tools a request carries: all of them, or — when `tools.search` defers MCP tools — the rest
 * and a `tool_search` tool that loads deferred ones into `loaded` (for the rest of the turn), and
 * finds skills too (the `skill` tool, never deferred, activates them).
 */
export const withToolSearch = (
  table: ToolTable,
  config: LoadedConfig,
  window: number,
  loaded: Set<string>,
): PlannedTools => {
  const tools = [...table.values()].flatMap((e) => searchable(e) ?? []);
  const alwaysLoad = new Set(
    config.servers.filter((s) => s.definition.alwaysLoad).map((s) => s.name),
  );
  // niffler's own tools (task, repository tools) are always sent whole, never deferred.
  const own = [...table.values()].filter((e) => e.kind === 'engine').map((e) => e.spec);
  const planned = planTools(tools, {
    mode: config.config.tools.search,
    window,
    alwaysLoad,
    loaded,
    alsoSent: own.length ? Math.ceil(JSON.stringify(own).length / 4) : 0,
  });
  const plan = { ...planned, offered: [...planned.offered, ...own] };
  if (plan.deferred.length === 0) return { plan, table };
  const search = plan.offered.find((t) => t.name === TOOL_SEARCH)!;
  const entry: ToolEntry = {
    spec: search,
    kind: 'engine',
    readOnly: true,
    destructive: false,
    run: async (args) => {
      const query = typeof args['query'] === 'string' ? args['query'] : '';
      const limit =
        typeof args['limit'] === 'number' ? Math.min(10, Math.max(1, args['limit'])) : 8;
      const found = searchTools(findable, query, limit);
      for (const tool of found) if (tool.kind !== 'skill') loaded.add(tool.spec.name);
      return { ok: true, output: searchResultText(found, query) };
    },
  };
  const offered = new Set(plan.offered.map((t) => t.name));
  // What the engine's own tools make findable besides: the skills (activated with `skill`).
  const findable = [...plan.deferred, ...[...table.values()].flatMap((e) => e.searchable ?? [])];
  const visible: ToolTable = new Map(
    [...table].filter(
      ([name]) => offered.has(name) || !plan.deferred.some((d) => d.spec.name === name),
    ),
  );
  // Deferred tools stay callable by name: a model that knows one need not search for it.
  for (const tool of plan.deferred) visible.set(tool.spec.name, table.get(tool.spec.name)!);
  visible.set(TOOL_SEARCH, entry);
  return { plan, table: visible };
};
