import { usableExtensions } from '../../main/extensions/load.ts';
import { findAgent, profileLimit } from '../../main/extensions/turn.ts';
import { effectivePolicy, type PolicyScope, type ToolTraits } from '../../main/trust/effective.ts';
import { builtinTools } from '../../workers/protocol/tools.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { formatTable, print, printJson, warn } from '../render/output.ts';
import { truncate } from '../render/format.ts';

interface PolicyRow {
  tool: string;
  decision: 'allow' | 'ask' | 'deny';
  reason: string;
}

/**
 * `niffler tools policy [NAME…]`: for each built-in tool, each configured MCP server's tools
 * (`name__*`, as a tool without `readOnlyHint`) and each NAME given, what a call would meet —
 * allow, ask or deny — and the rule and file that decide it, for a session of the agent profile
 * `--agent` names (else `agent.default`). Answers remembered in a session and `--yes` are not
 * counted: they belong to a run.
 */
export const toolsPolicy = (options: GlobalOptions & { names?: string[] }): void => {
  const loaded = loadForCommand(options);
  const servers = loaded.servers.map((s) => s.name);
  const builtins = builtinTools();
  const traits = (tool: string): ToolTraits => {
    const builtin = builtins.find((b) => b.name === tool);
    if (builtin)
      return {
        kind: 'builtin',
        readOnly: builtin.readOnly,
        destructive: builtin.destructive,
        defaultPolicy: builtin.defaultPolicy,
      };
    const server = tool.split('__')[0];
    return { kind: 'mcp', readOnly: false, destructive: false, ...(server ? { server } : {}) };
  };
  const tools = [
    ...new Set([
      ...builtins.map((b) => b.name),
      ...servers.map((name) => `${name}__*`),
      ...(options.names ?? []),
    ]),
  ];
  // As a session of this profile (`--agent`, else agent.default) meets them, before any answer.
  const agent = findAgent(
    usableExtensions(loaded).extensions,
    options.agent ?? loaded.config.agent.default,
  );
  const scope: PolicyScope = {
    config: loaded,
    chain: [profileLimit(agent)],
    consumer: { kind: 'model', yes: false, interactive: true },
  };
  const rows: PolicyRow[] = tools.map((tool) => {
    const { decision, reason } = effectivePolicy(scope, { name: tool, args: {} }, traits(tool));
    return { tool, decision, reason };
  });
  if (options.json) return printJson(rows);
  print(
    formatTable(
      ['TOOL', 'DECISION', 'WHY'],
      rows.map((r) => [r.tool, r.decision, r.reason]),
    ),
  );
};

/** One tool as `niffler tools` lists it. */
interface ToolRow {
  name: string;
  source: 'builtin' | 'mcp' | 'repo';
  /** The MCP server, or the repository tool's file. */
  from?: string;
  readOnly: boolean;
  description: string;
}

/** `niffler tools [--json]`: built-in, MCP and repository tools, and where each comes from. */
export const toolsList = (options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const [mcp, extensions] = await Promise.all([
      client.request('mcp/tools', {}),
      client.request('extensions/list', {}),
    ]);
    const rows: ToolRow[] = [
      ...builtinTools().map((t) => ({
        name: t.name,
        source: 'builtin' as const,
        readOnly: t.readOnly,
        description: t.description,
      })),
      ...mcp.map((t) => ({
        name: t.name,
        source: 'mcp' as const,
        from: t.server,
        readOnly: t.annotations?.readOnlyHint === true,
        description: t.description ?? t.title ?? '',
      })),
      ...extensions.tools.map((t) => ({
        name: t.name,
        source: 'repo' as const,
        from: t.file,
        readOnly: t.readOnly,
        description: t.description,
      })),
    ];
    if (options.json) return printJson(rows);
    print(
      formatTable(
        ['NAME', 'SOURCE', 'FROM', 'READ-ONLY', 'DESCRIPTION'],
        rows.map((r) => [
          r.name,
          r.source,
          r.from ?? '',
          r.readOnly ? 'yes' : 'no',
          truncate(r.description.split('\n')[0] ?? '', 60),
        ]),
      ),
    );
    for (const problem of extensions.problems) warn(problem);
  });
