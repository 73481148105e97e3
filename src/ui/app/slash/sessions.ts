import { searchTable, sessionsTable } from '../../commands/status-views.ts';
import { contextText } from '../../render/context.ts';
import { formatCost, formatTokens } from '../format.ts';
import { usage, type SlashContext } from './context.ts';

// `/sessions`, `/resume`, `/undo`, `/context` and `/cost`: this session and the earlier ones.

export const sessions = async (ctx: SlashContext) => {
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

/** `/context`: what the next request holds, part by part, the compactions and cleared outputs. */
export const contextView = async (ctx: SlashContext): Promise<void> => {
  const report = await ctx.client.request('session/context', {
    sessionId: await ctx.sessionId(),
    model: ctx.getState().model,
  });
  ctx.dispatch({ type: 'output', title: 'Context', text: contextText(report) });
};

/** `/undo [TURN] [apply]`: the files a turn changed, and with `apply` put back. */
export const undo = async (ctx: SlashContext, args: string[]): Promise<void> => {
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
export const cost = (ctx: SlashContext): void => {
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
export const resume = async (ctx: SlashContext, args: string[]): Promise<void> => {
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

/** `/clear`: a new session, keeping what this one switched off. */
export const clear = async (ctx: SlashContext): Promise<void> => {
  await ctx.open({ disabled: ctx.getState().disabled }, 'new session');
};

/** `/compact [focus]`: summarize older turns now, keeping what the focus names. */
export const compact = async (ctx: SlashContext, args: string[]): Promise<void> => {
  const focus = args.join(' ').trim();
  const { notes } = await ctx.client.request('session/compact', {
    sessionId: await ctx.sessionId(),
    ...(focus ? { focus } : {}),
  });
  return ctx.dispatch({ type: 'output', title: 'Compact', text: notes.join('\n') });
};
