import { explainApproval, type ApprovalRequest } from '../../main/engine/approvals.ts';
import { builtinTools } from '../../workers/protocol/tools.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { formatTable, print, printJson } from '../render/output.ts';

interface PolicyRow {
  tool: string;
  decision: 'allow' | 'ask' | 'deny';
  reason: string;
}

/**
 * `niffler tools policy [NAME…]`: for each built-in tool, each configured MCP server's tools
 * (`name__*`, as a tool without `readOnlyHint`) and each NAME given, what a call would meet —
 * allow, ask or deny — and the rule and file that decide it. Answers remembered in a session
 * and `--yes` are not counted: they belong to a run.
 */
export const toolsPolicy = (options: GlobalOptions & { names?: string[] }): void => {
  const loaded = loadForCommand(options);
  const servers = loaded.servers.map((s) => s.name);
  const builtins = builtinTools();
  const request = (tool: string): ApprovalRequest => {
    const builtin = builtins.find((b) => b.name === tool);
    if (builtin) return { tool, kind: 'builtin', defaultPolicy: builtin.defaultPolicy };
    const server = tool.split('__')[0];
    return { tool, kind: 'mcp', ...(server ? { server } : {}) };
  };
  const tools = [
    ...new Set([
      ...builtins.map((b) => b.name),
      ...servers.map((name) => `${name}__*`),
      ...(options.names ?? []),
    ]),
  ];
  const settings = {
    policy: loaded.policy,
    trustedServers: loaded.servers.filter((s) => s.definition.trust === true).map((s) => s.name),
  };
  const rows: PolicyRow[] = tools.map((tool) => ({
    tool,
    ...explainApproval(request(tool), settings),
  }));
  if (options.json) return printJson(rows);
  print(
    formatTable(
      ['TOOL', 'DECISION', 'WHY'],
      rows.map((r) => [r.tool, r.decision, r.reason]),
    ),
  );
};
