import {
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type InputRequiredResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { McpElicitationAnswer, McpSamplingAnswer } from '../../workers/protocol/mcp.ts';
import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import {
  configRules,
  filterTools,
  type CatalogTool,
  type ConsumerProfile,
  type Hidden,
  type Offer,
  type PolicyDecision,
} from '../engine/capabilities.ts';
import { toolCallHooks } from '../extensions/hook-points.ts';
import { effectivePolicy, type CallPolicy, type HookSay } from '../trust/effective.ts';
import type { CallToolOptions } from '../threads/mcp-types.ts';
import type { GatewayTool } from './catalog.ts';
import type { Consumer } from './consumer.ts';
import { elicitationAnswer, elicitParams, samplingAnswer, toCallToolResult } from './convert.ts';
import { Exchange, type Asker } from './exchange.ts';
import type { GatewayDeps } from './deps.ts';

/** One request's consumer: who, over what, and what it can do. */
export interface ConsumerView {
  consumer: Consumer;
  profile: ConsumerProfile;
}

/** What the policy says of a call of `tool` by this consumer (`args` for protected places). */
const outcomeFor = (
  deps: GatewayDeps,
  config: LoadedConfig,
  view: ConsumerView,
  tool: CatalogTool,
  args: Record<string, unknown>,
  hook: HookSay = {},
): CallPolicy =>
  effectivePolicy(
    {
      config,
      chain: [],
      consumer: { kind: 'client', name: view.profile.name },
      remembered: { repo: deps.approvals.remembered('').repo },
    },
    { name: tool.name, args },
    tool,
    hook,
  );

/**
 * The tools this consumer is offered now, and those it is not (with why); of those `named` only,
 * when given (each tool is decided on its own: a call decides just the one it names).
 */
export const offersFor = async (
  deps: GatewayDeps,
  view: ConsumerView,
  named?: string,
): Promise<{ offered: (Offer & { gateway: GatewayTool })[]; hidden: Hidden[] }> => {
  const config = deps.loaded();
  if (!config) return { offered: [], hidden: [] };
  const all = await deps.catalog.tools(view.consumer.scope);
  const tools = named === undefined ? all : all.filter((t) => servedAs(view, t.catalog) === named);
  const byName = new Map(tools.map((t) => [t.catalog.name, t]));
  const decide = (tool: CatalogTool): PolicyDecision =>
    outcomeFor(deps, config, view, tool, {}).decision;
  const { offered, hidden } = filterTools(
    tools.map((t) => t.catalog),
    view.profile,
    { ...configRules(config), decide },
  );
  return { offered: offered.map((o) => ({ ...o, gateway: byName.get(o.tool.name)! })), hidden };
};

/** The name a consumer knows `tool` by: its model-facing name, or its own with a `--server` scope. */
const servedAs = (view: ConsumerView, tool: CatalogTool): string =>
  view.consumer.scope ? tool.tool : tool.name;

/**
 * The offer a consumer calls by the name it was given — once servers still starting are done, if
 * it is not there yet; an unknown or hidden one is -32602.
 */
const findOffer = async (
  deps: GatewayDeps,
  view: ConsumerView,
  name: string,
  signal: AbortSignal,
) => {
  let { offered, hidden } = await offersFor(deps, view, name);
  if (offered.length === 0) {
    await deps.settled(signal);
    ({ offered, hidden } = await offersFor(deps, view, name));
  }
  const offer = offered[0];
  if (offer) return offer;
  const why = hidden[0]?.why;
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    why
      ? `tool "${name}" is not offered to this client: ${why}`
      : `unknown tool "${name}"; tools/list names the tools this client can call`,
  );
};

/** An approval asked of the consumer's user; its answer is the approval. */
const askApproval = async (asker: Asker, tool: string, reason: string): Promise<boolean> => {
  const response = (await asker.ask(
    inputRequired.elicit({
      message: `Allow ${tool}? (${reason})`,
      requestedSchema: {
        type: 'object',
        properties: { approve: { type: 'boolean', title: `Run ${tool}`, default: false } },
        required: ['approve'],
      },
    }),
  )) as { action?: string; content?: { approve?: unknown } };
  return response.action === 'accept' && response.content?.approve === true;
};

/**
 * Policy at call time (the arguments count: protected places always ask; a PreToolUse hook may
 * allow or ask): a refusal, or what the approval grants the call.
 */
const approve = async (
  deps: GatewayDeps,
  view: ConsumerView,
  offer: Offer,
  args: Record<string, unknown>,
  asker: Asker,
  hook: HookSay,
): Promise<{ refused: ToolResult } | { grants: string[] }> => {
  const config = deps.loaded();
  if (!config) return { refused: fail('denied', 'the config did not load; fix it and save') };
  const { name } = offer.tool;
  const outcome = outcomeFor(deps, config, view, offer.tool, args, hook);
  if (outcome.decision === 'allow') return { grants: [] };
  if (outcome.decision === 'deny')
    return { refused: fail('denied', `${name} is denied: ${outcome.reason}`) };
  if (!view.profile.meets.has('approval'))
    return {
      refused: fail(
        'denied',
        `${name} needs approval (${outcome.reason}), and this client cannot ask its user (no form elicitation)`,
      ),
    };
  return (await askApproval(asker, name, outcome.reason))
    ? { grants: outcome.grant ? [outcome.grant] : [] }
    : { refused: fail('denied', `the user declined ${name}`) };
};

/**
 * Answers a backing server's elicitations and sampling requests by asking the consumer, where it
 * can answer them; declined with a reason where it cannot.
 */
export const relayInput = (
  view: ConsumerView,
  asker: Asker,
): Required<Pick<CallToolOptions, 'onElicit' | 'onSample'>> => ({
  onElicit: async ({ server, elicitation }): Promise<McpElicitationAnswer> =>
    view.profile.meets.has('elicitation')
      ? elicitationAnswer(await asker.ask(inputRequired.elicit(elicitParams(server, elicitation))))
      : { action: 'decline', reason: 'the gateway client cannot answer elicitation' },
  onSample: async ({ params }): Promise<McpSamplingAnswer> =>
    view.profile.meets.has('sampling')
      ? samplingAnswer(await asker.ask(inputRequired.createMessage(params as never)))
      : { ok: false, reason: 'the gateway client cannot answer sampling' },
});

/**
 * Runs an approved call: a built-in in the tools pool, a repository tool's command in bash's
 * sandbox, an MCP tool on its warm server.
 */
const execute = async (
  deps: GatewayDeps,
  view: ConsumerView,
  tool: GatewayTool,
  args: Record<string, unknown>,
  asker: Asker,
  progress: ((p: { progress: number; total?: number; message?: string }) => void) | undefined,
  granted: string[],
): Promise<ToolResult> => {
  const sessionId = `gateway-${view.consumer.id}`;
  if (tool.def) {
    const given = granted.length ? { grants: granted } : {};
    const call = { name: tool.def.name, args, sessionId, ...given };
    const first = await deps.tools.run(call, asker.signal, progress);
    if (first.ok || first.error.code !== 'needs-approval' || !first.ask) return first;
    if (
      !view.profile.meets.has('approval') ||
      !(await askApproval(asker, tool.def.name, first.ask.reason))
    )
      return fail('denied', `${first.error.message} It was not approved.`);
    const grants = [...granted, first.ask.grant];
    return deps.tools.run({ name: tool.def.name, args, sessionId, grants }, asker.signal, progress);
  }
  if (tool.repo) return tool.repo.run(args, asker.signal);
  return deps.mcp.callTool(tool.info!.name, args, {
    signal: asker.signal,
    ...(progress ? { onProgress: progress } : {}),
    ...relayInput(view, asker),
  });
};

/**
 * Where a call's progress goes: to the consumer's progress token of the round that runs now
 * (none when the first round asked for no progress); `sent` settles once the last notification
 * went out, so that the result never overtakes it.
 */
const progressOf = (asker: Asker) => {
  let last: Promise<unknown> = Promise.resolve();
  if (asker.round()?.mcpReq._meta?.progressToken === undefined)
    return { sink: undefined, sent: () => last };
  const sink = (p: { progress: number; total?: number; message?: string }) => {
    const ctx = asker.round();
    const progressToken = ctx?.mcpReq._meta?.progressToken;
    if (!ctx || progressToken === undefined) return;
    last = ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken, ...p } })
      .catch(() => {}); // the consumer went away: nothing to tell
  };
  return { sink, sent: () => last };
};

/** The user's PreToolUse and PostToolUse hooks around a consumer's calls, as in a session. */
const hooksFor = (deps: GatewayDeps, view: ConsumerView, signal: AbortSignal) => {
  const config = deps.loaded();
  if (!config) return undefined;
  return toolCallHooks(
    {
      sessionId: `gateway-${view.consumer.id}`,
      transcriptPath: '',
      root: deps.root,
      config: () => deps.loaded() ?? config,
      run: deps.runCommand,
    },
    signal,
    (text) => deps.log.warn('gateway hook', { consumer: view.consumer.name, text }),
  );
};

/**
 * Hooks, policy, then the call, then hooks again: the work of its exchange — the path a
 * session's call takes from its PreToolUse hooks on.
 */
const work = async (
  deps: GatewayDeps,
  view: ConsumerView,
  offer: Offer & { gateway: GatewayTool },
  args: Record<string, unknown>,
  asker: Asker,
): Promise<ToolResult> => {
  const hooks = hooksFor(deps, view, asker.signal);
  const call = { id: `gateway-${view.consumer.id}-${view.consumer.calls}`, name: offer.tool.name };
  const entry = { kind: offer.tool.kind };
  const pre = (await hooks?.before({ ...call, args }, entry)) ?? {};
  if (pre.block) return fail('denied', `a PreToolUse hook blocked it: ${pre.block}`);
  const input = pre.args ?? args;
  const approved = await approve(deps, view, offer, input, asker, pre);
  if ('refused' in approved) return approved.refused;
  const progress = progressOf(asker);
  const result = await execute(
    deps,
    view,
    offer.gateway,
    input,
    asker,
    progress.sink,
    approved.grants,
  );
  await progress.sent();
  return hooks ? hooks.after({ ...call, args: input }, entry, result) : result;
};

/**
 * `tools/call` for one consumer: the tool it names (hidden ones are -32602), policy (an `ask`
 * is put to the consumer's user, whose answer is the approval), then the call — backing servers'
 * elicitations and sampling travel to the consumer in the same rounds.
 */
export const callTool = async (
  deps: GatewayDeps,
  view: ConsumerView,
  params: { name: string; arguments?: Record<string, unknown> },
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult> => {
  const offer = await findOffer(deps, view, params.name, ctx.mcpReq.signal);
  const args = params.arguments ?? {};
  const { consumer } = view;
  const first = ctx.mcpReq.requestState() === undefined;
  if (first) consumer.calls++;
  consumer.inFlight++;
  const started = performance.now();
  try {
    const owner = `${consumer.id}:${offer.tool.name}`;
    return await deps.exchanges.round(
      ctx,
      owner,
      (first) => new Exchange((asker) => work(deps, view, offer, args, asker), owner, first),
      (r) => {
        if (!r.ok) consumer.errors++;
        const line = {
          consumer: consumer.name,
          id: consumer.id,
          tool: offer.tool.name,
          ok: r.ok,
          ...(r.ok ? {} : { error: r.error.code }),
          ms: Math.round(performance.now() - started),
        };
        // Written once the answer is on its way: a log line (redaction, a write) is not the
        // consumer's to wait for.
        setImmediate(() => deps.log.info('gateway call', line));
        return toCallToolResult(r);
      },
    );
  } finally {
    consumer.inFlight--;
  }
};
