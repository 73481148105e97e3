import type { ModelSpec, ToolCall } from '../../workers/protocol/api.ts';
import type { McpToolInfo } from '../../workers/protocol/mcp.ts';
import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import type { ToolDefinition } from '../../workers/protocol/tools.ts';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import type { PromptParams } from '../protocol.ts';
import { effectivePolicy, type PolicyScope } from '../trust/effective.ts';
import type { EditDiagnostics } from '../lsp/loop.ts';
import type { ApprovalStore } from './approvals.ts';
import { builtinTool, configRules, filterTools, mcpTool, modelProfile } from './capabilities.ts';
import type { CallHooks, PreCall, ToolEntry, ToolTable, TurnIO } from '../calls/types.ts';

export type { ToolEntry, ToolTable, TurnIO } from '../calls/types.ts';

/** How far a long call has got (a search's files, an MCP server's progress notifications). */
type OnProgress = (progress: { progress: number; total?: number; message?: string }) => void;

/** The tools pool as the loop sees it. */
export interface BuiltinTools {
  definitions(): ToolDefinition[];
  run(
    call: {
      name: string;
      args: unknown;
      sessionId?: string;
      grants?: string[];
      readOnlyPaths?: string[];
    },
    signal: AbortSignal,
    onProgress?: OnProgress,
  ): Promise<ToolResult>;
}

/** The MCP worker as the loop sees it. */
export interface McpTools {
  listTools(): Promise<McpToolInfo[]>;
  /** Goes up whenever a server's tools change (absent: assume they may have). */
  readonly toolsVersion?: number;
  /** Notices of kept catalogs that the live ones, arriving after tools version `version`, revised. */
  keptRevisionsSince?(version: number | undefined): string[];
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      signal?: AbortSignal;
      onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
    },
  ): Promise<ToolResult>;
}

/** What running one step's calls needs. */
interface CallContext {
  sessionId: string;
  tools: BuiltinTools;
  mcp: McpTools;
  approvals: ApprovalStore;
  params: PromptParams;
  io: TurnIO;
  signal: AbortSignal;
  /** What this turn's calls may do: config, the profile chain, a command's grants, the consumer. */
  scope: PolicyScope;
  /** PreToolUse and PostToolUse hooks. */
  hooks?: CallHooks;
  /** Language servers' diagnostics after calls that change files (src/main/lsp/loop.ts). */
  lsp?: EditDiagnostics;
  /** Directories the session's built-in calls may also read (its active skills of yours). */
  readOnlyPaths?: readonly string[];
}

/** Who the table is for: the turn's model (vision, tool protocol) and the config it runs under. */
export interface TableFor {
  model: Pick<ModelSpec, 'name' | 'vision' | 'toolProtocol'>;
  config: LoadedConfig;
}

/**
 * The built-ins plus the tools of ready MCP servers that the capabilities module offers this
 * model: minus what the config leaves out, what this session switched off (`disabled`) and what
 * the model cannot use (image-only tools without vision).
 */
export const buildToolTable = async (
  tools: BuiltinTools,
  mcp: McpTools,
  disabled: ReadonlySet<string>,
  consumer: TableFor,
): Promise<ToolTable> => {
  const defs = new Map(tools.definitions().map((def) => [def.name, def]));
  const infos = new Map((await mcp.listTools()).map((tool) => [tool.name, tool]));
  const catalog = [...[...defs.values()].map(builtinTool), ...[...infos.values()].map(mcpTool)];
  const profile = modelProfile(consumer.model, disabled);
  const table: ToolTable = new Map();
  for (const { tool } of filterTools(catalog, profile, configRules(consumer.config)).offered) {
    const def = defs.get(tool.name);
    const info = infos.get(tool.name);
    if (def)
      table.set(def.name, {
        spec: { name: def.name, description: def.description, inputSchema: def.parameters },
        kind: 'builtin',
        readOnly: def.readOnly,
        defaultPolicy: def.defaultPolicy,
        destructive: def.destructive,
      });
    else if (info)
      table.set(info.name, {
        spec: {
          name: info.name,
          description: info.description ?? info.title ?? info.tool,
          inputSchema: info.inputSchema,
        },
        kind: 'mcp',
        readOnly: tool.readOnly,
        server: info.server,
        destructive: tool.destructive,
      });
  }
  return table;
};

/** Policy first; what asks goes to the front-end (denied in one-shot runs without `--yes`). */
const decide = async (
  call: ToolCall,
  entry: ToolEntry,
  ctx: CallContext,
  hook: PreCall = {},
): Promise<{ allowed: boolean; reason: string; grant?: string }> => {
  const { params, io, signal } = ctx;
  const outcome = effectivePolicy(
    { ...ctx.scope, remembered: ctx.approvals.remembered(ctx.sessionId) },
    call,
    entry,
    hook,
  );
  if (outcome.decision !== 'ask')
    return { allowed: outcome.decision === 'allow', reason: outcome.reason };
  if (!params.interactive)
    return {
      allowed: false,
      reason: outcome.protectedWhy
        ? `${call.name} needs approval: ${outcome.reason}; only an interactive session can approve it`
        : `${call.name} needs approval (${outcome.reason}); run with --yes or allow it in tools.policy`,
    };
  try {
    const { answer } = await io.ask(
      'approval/ask',
      {
        sessionId: ctx.sessionId,
        callId: call.id,
        tool: call.name,
        ...(entry.server ? { server: entry.server } : {}),
        args: call.args,
        readOnly: entry.readOnly,
        destructive: entry.destructive,
        reason: outcome.reason,
      },
      signal,
    );
    // A protected call's approval is for this call only: what it changes is the rules.
    if ((answer === 'session' || answer === 'repo') && !outcome.protectedWhy)
      await ctx.approvals.remember(answer, ctx.sessionId, call.name, 'allow');
    return answer === 'deny'
      ? { allowed: false, reason: 'the user denied it' }
      : {
          allowed: true,
          reason: `approved (${answer})`,
          ...(outcome.grant ? { grant: outcome.grant } : {}),
        };
  } catch (error) {
    if (signal.aborted) return { allowed: false, reason: 'the turn was cancelled' };
    return { allowed: false, reason: `approval could not be asked: ${(error as Error).message}` };
  }
};

/**
 * A built-in call whose tool stopped to ask (`needs-approval`: fetch meeting a private address)
 * is asked of the user — never settled by policy or `--yes` — and run again with the grant.
 */
const runBuiltin = async (
  call: ToolCall,
  entry: ToolEntry,
  ctx: CallContext,
  granted: string[] = [],
): Promise<ToolResult> => {
  const { io, signal, sessionId } = ctx;
  const given = {
    ...(granted.length ? { grants: granted } : {}),
    ...(ctx.readOnlyPaths?.length ? { readOnlyPaths: [...ctx.readOnlyPaths] } : {}),
  };
  const progress = progressOf(call, io);
  const first = await ctx.tools.run(
    { name: call.name, args: call.args, sessionId, ...given },
    signal,
    progress,
  );
  if (first.ok || first.error.code !== 'needs-approval' || !first.ask) return first;
  if (!ctx.params.interactive)
    return fail('denied', `${first.error.message} No one can be asked in this run.`);
  try {
    const { answer } = await io.ask(
      'approval/ask',
      {
        sessionId,
        callId: call.id,
        tool: call.name,
        args: call.args,
        readOnly: entry.readOnly,
        destructive: entry.destructive,
        reason: first.ask.reason,
      },
      signal,
    );
    if (answer === 'deny') return fail('denied', `${first.error.message} The user denied it.`);
  } catch (error) {
    return fail('denied', `${first.error.message} (asking failed: ${(error as Error).message})`);
  }
  const grants = [...granted, first.ask.grant];
  return ctx.tools.run(
    { name: call.name, args: call.args, sessionId, ...given, grants },
    signal,
    progress,
  );
};

/** A call's progress as `tool-progress` events of the turn. */
const progressOf =
  (call: ToolCall, io: TurnIO): OnProgress =>
  ({ progress, total, message }) =>
    io.emit({
      type: 'tool-progress',
      id: call.id,
      progress,
      ...(total !== undefined ? { total } : {}),
      ...(message ? { message } : {}),
    });

type Planned = { call: ToolCall; entry?: ToolEntry; result?: ToolResult; grants?: string[] };

/** What becomes of one call before anything runs: a result already (refused), or cleared to run. */
const plan = async (
  call: ToolCall,
  invalid: ReadonlyMap<string, string>,
  table: ToolTable,
  ctx: CallContext,
  denied: string[],
): Promise<Planned> => {
  const entry = table.get(call.name);
  const bad = invalid.get(call.id);
  if (bad) return { call, result: fail('invalid-args', bad) };
  if (!entry)
    return {
      call,
      result: fail(
        'not-found',
        `there is no tool named "${call.name}"; the available tools are: ${[...table.keys()].join(', ')}`,
      ),
    };
  const pre = (await ctx.hooks?.before(call, entry)) ?? {};
  const target = pre.args ? { ...call, args: pre.args } : call;
  const decision = pre.block
    ? { allowed: false, reason: `a PreToolUse hook blocked it: ${pre.block}` }
    : await decide(target, entry, ctx, pre);
  if (decision.allowed)
    return {
      call: target,
      entry,
      ...('grant' in decision && decision.grant ? { grants: [decision.grant] } : {}),
    };
  denied.push(call.name);
  ctx.io.emit({ type: 'tool-denied', id: call.id, name: call.name, reason: decision.reason });
  return { call, result: fail('denied', `the call was not run: ${decision.reason}`) };
};

/** Runs one cleared call where its tool lives: the engine, the tools pool, or an MCP server. */
const dispatchCall = (
  call: ToolCall,
  entry: ToolEntry,
  ctx: CallContext,
  grants?: string[],
): Promise<ToolResult> => {
  const { io, signal } = ctx;
  if (signal.aborted)
    return Promise.resolve(fail('canceled', 'the turn was cancelled before this call ran'));
  if (entry.kind === 'engine') return entry.run!(call.args, { callId: call.id, io, signal });
  if (entry.kind === 'builtin') return runBuiltin(call, entry, ctx, grants);
  return ctx.mcp.callTool(call.name, call.args, { signal, onProgress: progressOf(call, io) });
};

/** Runs a planned call (PostToolUse hooks after it) and reports its result. */
const runPlanned = async (item: Planned, ctx: CallContext): Promise<void> => {
  const started = performance.now();
  if (!item.result && item.entry) {
    const run = () => dispatchCall(item.call, item.entry!, ctx, item.grants);
    item.result = await (ctx.lsp && item.entry.kind === 'builtin'
      ? ctx.lsp.around(item.call, run)
      : run());
    if (ctx.hooks) item.result = await ctx.hooks.after(item.call, item.entry, item.result);
  }
  ctx.io.emit({
    type: 'tool-result',
    id: item.call.id,
    name: item.call.name,
    result: item.result!,
    ms: performance.now() - started,
  });
};

/**
 * Approves and runs one step's calls: consecutive read-only calls together, anything that may
 * change something alone and in order. Every call gets a result (unknown tools, unreadable
 * arguments and denials included), returned in the order of `calls`; names of denied calls are
 * pushed to `denied`.
 */
export const runToolCalls = async (
  calls: ToolCall[],
  invalid: ReadonlyMap<string, string>,
  table: ToolTable,
  ctx: CallContext,
  denied: string[],
): Promise<{ call: ToolCall; result: ToolResult }[]> => {
  const planned: Planned[] = [];
  for (const call of calls) planned.push(await plan(call, invalid, table, ctx, denied));
  for (let i = 0; i < planned.length;) {
    const batch = [planned[i]!];
    if (planned[i]!.entry?.readOnly)
      while (i + batch.length < planned.length && planned[i + batch.length]!.entry?.readOnly)
        batch.push(planned[i + batch.length]!);
    await Promise.all(batch.map((item) => runPlanned(item, ctx)));
    i += batch.length;
  }
  return planned.map((item) => ({ call: item.call, result: item.result! }));
};
