import { mcpStatusTable, type McpStatusColumn } from '../../commands/status-views.ts';
import { traceLine } from '../../commands/mcp-offers.ts';
import { lspStatusLines, lspStatusTable } from '../../commands/lsp-views.ts';
import { truncate } from '../../render/format.ts';
import { usage, type SlashContext } from './context.ts';

// `/mcp`, `/lsp`, `/tools` and `/trace`: the servers and tools of this workspace.

// Fewer columns than `niffler mcp status`, tools first: what matters inside a session.
const MCP_COLUMNS: McpStatusColumn[] = [
  'NAME',
  'STATE',
  'PROTOCOL',
  'TOOLS',
  'PID',
  'UPTIME',
  'CALLS',
  'ERRORS',
  'P50',
  'LAST ERROR',
];

export const mcp = async (ctx: SlashContext, args: string[]) => {
  const [verb, name] = args;
  if (!verb) {
    const status = await ctx.client.request('mcp/status', {});
    ctx.dispatch({ type: 'servers', servers: status.servers });
    const table = status.servers.length
      ? mcpStatusTable(status.servers, { columns: MCP_COLUMNS })
      : 'no MCP servers configured (add one with niffler mcp add NAME -- COMMAND)';
    const extra = [status.configError, ...status.warnings].filter(Boolean).join('\n');
    return ctx.dispatch({
      type: 'output',
      title: 'MCP servers',
      text: extra ? `${table}\n${extra}` : table,
    });
  }
  if (verb !== 'start' && verb !== 'stop' && verb !== 'restart')
    return usage('/mcp [start|stop|restart NAME]');
  if (!name) return usage(`/mcp ${verb} NAME`);
  const status = await ctx.client.request(`mcp/${verb}`, { name });
  ctx.dispatch({ type: 'server-status', status });
  ctx.dispatch({ type: 'notice', level: 'info', text: `${name}: ${status.state}` });
};

/** `/lsp`: the language servers' table, and what each waits for or went through. */
export const lspView = async (ctx: SlashContext) => {
  const status = await ctx.client.request('lsp/status', {});
  const lines = lspStatusLines(status.servers);
  const table = lspStatusTable(status.servers);
  const off = status.enabled ? '' : 'language servers are off here (lsp.enabled: false)\n';
  return ctx.dispatch({
    type: 'output',
    title: 'Language servers',
    text: `${off}${table}${lines.length ? `\n${lines.join('\n')}` : ''}`,
  });
};

const toolLine = (name: string, off: boolean, notes: string[], description = ''): string => {
  const head = `  ${off ? '✗' : '✓'} ${name}${notes.length ? ` [${notes.join(', ')}]` : ''}`;
  const first = description.split('\n')[0] ?? '';
  return `${head}  ${truncate(first, Math.max(10, 92 - head.length))}`;
};

/** `/tools`: every tool, ✗ where this session switched it (or its server) off; `on|off NAME`. */
export const tools = async (ctx: SlashContext, args: string[]) => {
  const [verb, name] = args;
  if (verb === 'on' || verb === 'off') {
    if (!name) return usage(`/tools ${verb} NAME (a server, or a tool as server__tool)`);
    const result = await ctx.client.request('session/toggle', {
      sessionId: await ctx.sessionId(),
      name,
      enabled: verb === 'on',
    });
    ctx.dispatch({ type: 'disabled', disabled: result.disabled });
    return ctx.dispatch({
      type: 'notice',
      level: 'info',
      text: `${name} ${verb} for this session (kept by /clear and /resume)`,
    });
  }
  if (verb) return usage('/tools [on|off NAME]');
  const disabled = new Set(ctx.getState().disabled);
  const [list, { builtinTools }] = await Promise.all([
    ctx.client.request('mcp/tools', {}),
    import('../../../workers/protocol/tools.ts'),
  ]);
  const lines = ['built-in'];
  for (const tool of builtinTools())
    lines.push(toolLine(tool.name, disabled.has(tool.name), [], tool.description));
  for (const server of [...new Set(list.map((t) => t.server))]) {
    lines.push(`${server}${disabled.has(server) ? ' (off)' : ''}`);
    for (const tool of list.filter((t) => t.server === server)) {
      const off = disabled.has(server) || disabled.has(tool.name);
      const notes = [
        tool.annotations?.readOnlyHint ? 'read-only' : '',
        tool.annotations?.destructiveHint ? 'destructive' : '',
      ].filter(Boolean);
      lines.push(toolLine(tool.name, off, notes, tool.description));
    }
  }
  const repo = await ctx.client.request('extensions/list', {}).catch(() => undefined);
  if (repo?.tools.length) lines.push(`repo${disabled.has('repo') ? ' (off)' : ''}`);
  for (const tool of repo?.tools ?? [])
    lines.push(
      toolLine(
        tool.name,
        disabled.has(tool.name) || disabled.has('repo'),
        tool.readOnly ? ['read-only'] : [],
        tool.description,
      ),
    );
  lines.push('', 'Switch one off for this session: /tools off NAME (a server or a tool).');
  ctx.dispatch({ type: 'output', title: 'Tools', text: lines.join('\n') });
};

/** Entries `/trace` shows. */
const TRACE_ENTRIES = 20;

/** `/trace [NAME]`: the last JSON-RPC messages of a server, or of every ready server. */
export const trace = async (ctx: SlashContext, args: string[]) => {
  const [name] = args;
  const servers = name
    ? [name]
    : ctx
        .getState()
        .servers.filter((s) => s.state === 'ready')
        .map((s) => s.name);
  const all = await Promise.all(
    servers.map(async (server) =>
      (await ctx.client.request('mcp/trace', { server })).map((e) => ({ server, e })),
    ),
  );
  const lines = all
    .flat()
    .sort((a, b) => a.e.at - b.e.at)
    .slice(-TRACE_ENTRIES)
    // One line each, cut to the terminal: `niffler mcp logs NAME --trace` has the whole bodies.
    .map(({ server, e }) =>
      truncate(`${name ? '' : `${server}  `}${traceLine(e)}`, (process.stdout.columns || 100) - 4),
    );
  ctx.dispatch({
    type: 'output',
    title: name ? `Protocol trace: ${name}` : 'Protocol trace',
    text: lines.length
      ? `${lines.join('\n')}\n\nFull bodies: niffler mcp logs NAME --trace (--follow to watch)`
      : 'no messages yet (no server is ready)',
  });
};
