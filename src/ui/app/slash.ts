import type { EngineApi as EngineClient } from './deferred-client.ts';
import type { Env } from '../../main/paths.ts';
import type { SessionOpened } from '../../main/protocol.ts';
import {
  mcpStatusTable,
  searchTable,
  sessionsTable,
  type McpStatusColumn,
} from '../commands/status-views.ts';
import { truncate } from '../render/format.ts';
import { contextText } from '../render/context.ts';
import { traceLine } from '../commands/mcp-offers.ts';
import { lspStatusLines, lspStatusTable } from '../commands/lsp-views.ts';
import { helpText } from './commands.ts';
import { formatCost, formatTokens } from './format.ts';
import type { Action, UiState } from './state/types.ts';

export interface SlashContext {
  client: EngineClient;
  root: string;
  env: Env;
  dispatch: (action: Action) => void;
  getState: () => UiState;
  sessionId: () => Promise<string>;
  isBusy: () => boolean;
  open: (
    params: { resume?: string; atTurn?: number; disabled?: string[] },
    note?: string,
  ) => Promise<SessionOpened>;
  setModel: (name: string) => void;
  exit: () => void;
}

const usage = (text: string): never => {
  throw new Error(`usage: ${text}`);
};

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

const mcp = async (ctx: SlashContext, args: string[]) => {
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
const lspView = async (ctx: SlashContext) => {
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
const tools = async (ctx: SlashContext, args: string[]) => {
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
    import('../../workers/protocol/tools.ts'),
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

/** `/agent [NAME]`: the profiles, or run this session's turns with NAME from now on. */
const agent = async (ctx: SlashContext, args: string[]) => {
  const [name] = args;
  const { extensions, agent: current } = ctx.getState();
  if (!name) {
    const text = extensions.agents
      .map((a) => {
        const mark = a.name === current ? '›' : ' ';
        return `${mark} ${a.name.padEnd(12)} ${a.mode.padEnd(8)} ${a.source.padEnd(7)} ${a.description}`;
      })
      .join('\n');
    return ctx.dispatch({
      type: 'output',
      title: 'Agents',
      text: `${text || '(none listed)'}\n\n/agent NAME switches; shift-tab cycles the primary ones`,
    });
  }
  const result = await ctx.client.request('session/agent', {
    sessionId: await ctx.sessionId(),
    agent: name,
  });
  ctx.dispatch({ type: 'agent', agent: result.agent });
  ctx.dispatch({
    type: 'notice',
    level: 'info',
    text: `agent: ${result.agent} from the next message on`,
  });
};

/** `/skills`: every skill found, offered or not and why (`/skills NAME` goes to the engine). */
const skills = async (ctx: SlashContext) => {
  const list = await ctx.client.request('extensions/list', {});
  const found = list.skills ?? [];
  const lines = found.map((s) => {
    const mark = s.offered ? '•' : ' ';
    const about = s.description.replace(/\s+/g, ' ').slice(0, 90);
    return `${mark} ${s.name.padEnd(24)} ${`${s.source} ${s.location}`.padEnd(24)} ${s.trust.padEnd(9)} ${about}`;
  });
  for (const s of found) for (const problem of s.problems) lines.push(`  ${s.name}: ${problem}`);
  const text = found.length
    ? `${lines.join('\n')}\n\n• offered to the model; /skills NAME [request] activates one now`
    : 'no skills found (niffler skills --help says where they are read from)';
  ctx.dispatch({ type: 'output', title: 'Skills', text });
};

const model = async (ctx: SlashContext, args: string[]) => {
  // The config loader (zod, yaml) is loaded only when a command needs it.
  const { loadConfig } = await import('../../main/config/load.ts');
  const loaded = loadConfig({ root: ctx.root, env: ctx.env });
  const models = loaded.ok ? Object.keys(loaded.value.config.models) : [];
  const [name] = args;
  if (!name) {
    const current = ctx.getState().model;
    const text = models.length
      ? models.map((m) => `${m === current ? '›' : ' '} ${m}`).join('\n')
      : `${current} (no models configured; see .niffler.example/config.yaml)`;
    return ctx.dispatch({ type: 'output', title: 'Models', text });
  }
  if (models.length && !models.includes(name))
    throw new Error(
      `no model named "${name}" (configured: ${models.join(', ')}); add it under models: in the config`,
    );
  ctx.setModel(name);
  ctx.dispatch({ type: 'model', model: name });
  ctx.dispatch({ type: 'notice', level: 'info', text: `model: ${name} from the next message on` });
};

const sessions = async (ctx: SlashContext) => {
  const list = await ctx.client.request('session/list', {});
  ctx.dispatch({
    type: 'output',
    title: 'Sessions',
    text: list.length
      ? `${sessionsTable(list.slice(0, 20))}\n\n/resume ID continues one`
      : 'no sessions yet',
  });
};

/** Looks like a session id (`20260101-120000-abc123`), not words to search for. */
const isSessionId = (text: string): boolean => /^\d{8}-\d{6}-[0-9a-f]{6}$/.test(text);

/** `/resume WORDS`: the sessions holding every word, to resume by id. */
const findSessions = async (ctx: SlashContext, text: string) => {
  const { hits, problems } = await ctx.client.request('session/search', { text, limit: 15 });
  const found = hits.length ? `${searchTable(hits)}\n\n/resume ID continues one` : 'none found';
  ctx.dispatch({
    type: 'output',
    title: `Sessions mentioning "${text}"`,
    text: [found, ...problems.map((p) => `warning: ${p}`)].join('\n'),
  });
};

const config = async (ctx: SlashContext) => {
  const status = await ctx.client.request('daemon/status', {});
  const state = ctx.getState();
  const lines = [
    `workspace  ${status.root}`,
    `model      ${state.model}`,
    `daemon     pid ${status.pid}, ${status.socket ?? 'in-process'}`,
    '',
    'config files (lowest precedence first):',
    ...status.configFiles.map((f) => `  ${f.exists ? '✓' : '·'} ${f.kind.padEnd(7)} ${f.file}`),
    ...(status.configError ? ['', `error: ${status.configError}`] : []),
    '',
    'niffler config show --origin prints every value and where it came from.',
  ];
  ctx.dispatch({ type: 'output', title: 'Config', text: lines.join('\n') });
};

/** `/context`: what the next request holds, part by part, the compactions and cleared outputs. */
const contextView = async (ctx: SlashContext): Promise<void> => {
  const report = await ctx.client.request('session/context', {
    sessionId: await ctx.sessionId(),
    model: ctx.getState().model,
  });
  ctx.dispatch({ type: 'output', title: 'Context', text: contextText(report) });
};

/** Entries `/trace` shows. */
const TRACE_ENTRIES = 20;

/** `/trace [NAME]`: the last JSON-RPC messages of a server, or of every ready server. */
const trace = async (ctx: SlashContext, args: string[]) => {
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

/** `/undo [TURN] [apply]`: the files a turn changed, and with `apply` put back. */
const undo = async (ctx: SlashContext, args: string[]): Promise<void> => {
  const apply = args.includes('apply');
  const rest = args.filter((a) => a !== 'apply');
  const turn = rest[0] === undefined ? undefined : Number(rest[0]);
  if (turn !== undefined && !(Number.isInteger(turn) && turn > 0))
    return usage('/undo [TURN] [apply]');
  const target = { sessionId: await ctx.sessionId(), ...(turn ? { turn } : {}) };
  const plan = await ctx.client.request('session/undo', { ...target, apply });
  if (plan.changes.length === 0)
    return ctx.dispatch({
      type: 'output',
      title: 'Undo',
      text: `turn ${plan.turn} changed no file`,
    });
  const files = plan.changes.map((c) => `${c.change.padEnd(8)} ${c.path}`).join('\n');
  return ctx.dispatch({
    type: 'output',
    title: apply ? `Undid turn ${plan.turn}` : `Undo turn ${plan.turn}?`,
    text: apply
      ? `put back as they were before the turn:\n${files}${plan.refused.length ? `\nnot written (outside the workspace now): ${plan.refused.join(', ')}` : ''}`
      : `${files}\n\n${plan.diff}\n/undo ${plan.turn} apply puts these files back as they were before the turn`,
  });
};

/** `/cost`: what this session has spent, its earlier runs included. */
const cost = (ctx: SlashContext): void => {
  const { totals, sessionId } = ctx.getState();
  const text = [
    `session   ${sessionId ?? '-'}`,
    `turns     ${totals.turns}`,
    `tokens    ${formatTokens(totals.inputTokens)} in, ${formatTokens(totals.outputTokens)} out`,
    `cost      ${totals.costUsd > 0 ? formatCost(totals.costUsd) : 'unknown (set prices for the model in the config)'}`,
  ].join('\n');
  return ctx.dispatch({
    type: 'output',
    title: 'Cost (this session, its earlier runs included)',
    text,
  });
};

/** `/resume [ID [TURN] | WORDS]`: a session again (from a turn: a fork), or the ones that match. */
const resume = async (ctx: SlashContext, args: string[]): Promise<void> => {
  if (!args[0]) return sessions(ctx);
  if (!isSessionId(args[0]) || (args.length > 1 && !/^\d+$/.test(args[1]!)))
    return findSessions(ctx, args.join(' '));
  if (args[1] !== undefined) {
    const atTurn = Number(args[1]);
    if (!Number.isInteger(atTurn) || atTurn < 1)
      return usage('/resume ID [TURN]: TURN is a turn number');
    await ctx.open({ resume: args[0], atTurn }, `forked ${args[0]} at turn ${atTurn}`);
    return;
  }
  await ctx.open({ resume: args[0] }, `resumed ${args[0]}`);
  return;
};

/** Runs one slash command; throws with a message for the transcript when it fails. */
export const runSlash = async (name: string, args: string[], ctx: SlashContext): Promise<void> => {
  const busy = () => {
    if (ctx.isBusy())
      throw new Error(`/${name} waits until the running turn ends (Esc cancels it)`);
  };
  switch (name) {
    case 'help':
    case '?':
      return ctx.dispatch({
        type: 'output',
        title: 'Help',
        text: helpText(ctx.getState().extensions.commands),
      });
    case 'mcp':
      return mcp(ctx, args);
    case 'lsp':
      return lspView(ctx);
    case 'tools':
      return tools(ctx, args);
    case 'agent':
      return agent(ctx, args);
    case 'model':
      return model(ctx, args);
    case 'skills':
      return skills(ctx);
    case 'clear':
      busy();
      await ctx.open({ disabled: ctx.getState().disabled }, 'new session');
      return;
    case 'sessions':
      return sessions(ctx);
    case 'resume':
      busy();
      return resume(ctx, args);
    case 'context':
      return await contextView(ctx);
    case 'undo':
      busy();
      return undo(ctx, args);
    case 'compact': {
      busy();
      const focus = args.join(' ').trim();
      const { notes } = await ctx.client.request('session/compact', {
        sessionId: await ctx.sessionId(),
        ...(focus ? { focus } : {}),
      });
      return ctx.dispatch({ type: 'output', title: 'Compact', text: notes.join('\n') });
    }
    case 'cost':
      return cost(ctx);
    case 'config':
      return config(ctx);
    case 'trace':
      return trace(ctx, args);
    case 'exit':
    case 'quit':
      return ctx.exit();
    default:
      throw new Error(`unknown command /${name}; /help lists the commands`);
  }
};
