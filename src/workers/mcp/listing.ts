import type {
  McpPromptInfo,
  McpResourceInfo,
  McpResourceTemplateInfo,
  McpToolInfo,
} from '../protocol/mcp.ts';
import { modelName, type NameTable } from './naming.ts';
import type { ServerBase } from './server-base.ts';

// One server's catalog as main sees it: its tools under their model-facing names (with what their
// calls were seen to do), its prompts, resources and resource templates, each tagged with the
// server. Plain data, copied: nothing main holds reaches back into a connection.

/** What the listings read of a server: its name, catalog, and what its tools' calls were seen to do. */
type Listed = Pick<ServerBase, 'name' | 'catalog'> & Partial<Pick<ServerBase, 'factsOf'>>;

export const toolsOf = (conn: Listed, names: NameTable): McpToolInfo[] => {
  const facts = (tool: string) => conn.factsOf?.(tool);
  return conn.catalog.tools.flatMap((tool) => {
    const name = modelName(names, { server: conn.name, tool: tool.name });
    if (!name) return [];
    return [
      {
        name,
        server: conn.name,
        tool: tool.name,
        ...(tool.title ? { title: tool.title } : {}),
        ...(tool.description ? { description: tool.description } : {}),
        inputSchema: tool.inputSchema,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
        ...(tool.annotations ? { annotations: { ...tool.annotations } } : {}),
        ...(facts(tool.name) ? { observed: facts(tool.name) } : {}),
      },
    ];
  });
};

export const promptsOf = (conn: Listed): McpPromptInfo[] =>
  conn.catalog.prompts.map((p) => ({
    server: conn.name,
    name: p.name,
    ...(p.description ? { description: p.description } : {}),
    ...(p.arguments ? { arguments: p.arguments.map((a) => ({ ...a })) } : {}),
  }));

export const resourcesOf = (conn: Listed): McpResourceInfo[] =>
  conn.catalog.resources.map((r) => ({
    server: conn.name,
    uri: r.uri,
    name: r.name,
    ...(r.description ? { description: r.description } : {}),
    ...(r.mimeType ? { mimeType: r.mimeType } : {}),
  }));

export const templatesOf = (conn: Listed): McpResourceTemplateInfo[] =>
  conn.catalog.templates.map((t) => ({
    server: conn.name,
    uriTemplate: t.uriTemplate,
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    ...(t.mimeType ? { mimeType: t.mimeType } : {}),
  }));

/** The servers whose tools' model-facing names differ between two name tables. */
export const renamedServers = (before: NameTable, after: NameTable): Set<string> => {
  const changed = new Set<string>();
  for (const [key, name] of after.toModel)
    if (before.toModel.get(key) !== name) changed.add(key.split('\u0000')[0]!);
  for (const [key] of before.toModel)
    if (!after.toModel.has(key)) changed.add(key.split('\u0000')[0]!);
  return changed;
};
