import { NO_OFFERS } from '../mcp-offers.ts';
import type { SessionEvent, TurnSummary } from '../../../main/protocol.ts';
import type { ToolResult } from '../../../workers/protocol/tool-result.ts';
import { diagnosticsNote, summarizeResult } from '../../render/turn.ts';
import type { Action, Entry, NewEntry, NoticeLevel, ToolCard, UiState } from './types.ts';

/** The state before the session opens: the first frame draws from it. */
export const initialState = (workspace: string, model: string): UiState => ({
  workspace,
  model,
  sessionId: null,
  committed: [],
  live: [],
  turn: null,
  servers: [],
  offers: NO_OFFERS,
  totals: { inputTokens: 0, outputTokens: 0, costUsd: 0, turns: 0 },
  dialogs: [],
  exitArmed: false,
  expanded: false,
  nextId: 1,
  context: null,
  agent: 'build',
  disabled: [],
  extensions: { agents: [], commands: [], skills: [] },
});

const extensionsOf = ({ agents, commands, skills }: Extract<Action, { type: 'extensions' }>) => ({
  agents,
  commands,
  skills,
});

/** A turn or a `!shell` command runs: new entries go to the live area, and the clock ticks. */
export const isBusy = (state: UiState): boolean =>
  state.turn !== null || state.live.some((e) => e.kind === 'shell' && e.running);

const add = (state: UiState, entry: NewEntry): UiState => {
  const withId = { ...entry, id: `e${state.nextId}` };
  return isBusy(state)
    ? { ...state, live: [...state.live, withId], nextId: state.nextId + 1 }
    : { ...state, committed: [...state.committed, withId], nextId: state.nextId + 1 };
};

/** Moves the live area into the transcript once no turn and no shell command runs. */
const settle = (state: UiState): UiState =>
  isBusy(state) ? state : { ...state, committed: [...state.committed, ...state.live], live: [] };

const updateLive = (state: UiState, match: (e: Entry) => boolean, fn: (e: Entry) => Entry) => {
  const index = state.live.findLastIndex(match);
  if (index < 0) return state;
  const live = [...state.live];
  live[index] = fn(live[index]!);
  return { ...state, live };
};

const appendText = (state: UiState, field: 'text' | 'reasoning', text: string): UiState => {
  const last = state.live.at(-1);
  if (last?.kind === 'assistant' && (field === 'text' || !last.text))
    return updateLive(
      state,
      (e) => e === last,
      (e) => ({ ...e, [field]: (e as typeof last)[field] + text }),
    );
  return add(state, {
    kind: 'assistant',
    text: field === 'text' ? text : '',
    reasoning: field === 'reasoning' ? text : '',
  });
};

/** The full text of a result, for an expanded card. */
export const resultDetail = (result: ToolResult): string =>
  result.ok
    ? result.output
    : [result.error.message, result.output].filter((t): t is string => Boolean(t)).join('\n');

/** The card's line of what the language servers found, when they found something. */
const withProblem = (result: ToolResult): { problem?: string } => {
  const problem = diagnosticsNote(result);
  return problem ? { problem } : {};
};

const updateCard = (state: UiState, callId: string, fn: (card: ToolCard) => ToolCard) =>
  updateLive(
    state,
    (e) => e.kind === 'tool' && e.callId === callId,
    (e) => fn(e as ToolCard),
  );

const finishTurn = (state: UiState, summary: TurnSummary): UiState => {
  const totals = {
    inputTokens: state.totals.inputTokens + summary.usage.inputTokens,
    outputTokens: state.totals.outputTokens + summary.usage.outputTokens,
    costUsd: state.totals.costUsd + (summary.costUsd ?? 0),
    turns: state.totals.turns + 1,
  };
  const next = { ...state, totals };
  switch (summary.outcome) {
    case 'cancelled':
      return add(next, { kind: 'notice', level: 'warn', text: 'cancelled' });
    case 'error': {
      const last = next.live.at(-1);
      if (last?.kind === 'notice' && last.text === summary.error)
        return updateLive(
          next,
          (e) => e === last,
          (e) => ({ ...e, level: 'error' as NoticeLevel }),
        );
      return add(next, {
        kind: 'notice',
        level: 'error',
        text: summary.error ?? 'the turn failed',
      });
    }
    case 'answered':
    case 'max-steps':
      return next;
  }
};

/** A tool call's card: made when the call comes, then denied, progressing or with its result. */
const onToolEvent = (
  state: UiState,
  event: Extract<
    SessionEvent,
    { type: 'tool-call' | 'tool-denied' | 'tool-progress' | 'tool-result' }
  >,
  now: number,
): UiState => {
  switch (event.type) {
    case 'tool-call':
      return add(state, {
        kind: 'tool',
        callId: event.id,
        name: event.name,
        ...(event.server ? { server: event.server } : {}),
        args: event.args,
        status: 'running',
        startedAt: now,
      });
    case 'tool-denied':
      return updateCard(state, event.id, (card) => ({
        ...card,
        status: 'denied',
        summary: event.reason,
        ms: now - card.startedAt,
      }));
    case 'tool-progress':
      return updateCard(state, event.id, (card) => ({
        ...card,
        progress: [
          event.total ? `${event.progress}/${event.total}` : String(event.progress),
          event.message,
        ]
          .filter(Boolean)
          .join(' '),
      }));
    case 'tool-result':
      return updateCard(state, event.id, (card) => ({
        ...card,
        status: card.status === 'denied' ? 'denied' : event.result.ok ? 'done' : 'error',
        ms: Math.round(event.ms),
        summary: card.status === 'denied' ? card.summary : summarizeResult(event.result),
        detail: resultDetail(event.result),
        ...withProblem(event.result),
      }));
  }
};

const onEvent = (state: UiState, event: SessionEvent, now: number): UiState => {
  switch (event.type) {
    case 'turn-start':
      return {
        ...state,
        model: event.model,
        turn: state.turn ? { ...state.turn, started: true, waitingFor: [] } : state.turn,
      };
    case 'text':
      return appendText(state, 'text', event.text);
    case 'reasoning':
      return appendText(state, 'reasoning', event.text);
    case 'tool-call':
    case 'tool-denied':
    case 'tool-progress':
    case 'tool-result':
      return onToolEvent(state, event, now);
    case 'retry':
      return add(state, {
        kind: 'notice',
        level: 'warn',
        text: `${event.reason}; retry ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)}s`,
      });
    case 'notice':
      return add(state, { kind: 'notice', level: event.level, text: event.text });
    case 'skill': {
      const { type: _type, ...card } = event;
      return add(state, { kind: 'skill', ...card });
    }
    case 'usage':
      return state;
    case 'context':
      return { ...state, context: { use: event.use, window: event.window } };
    case 'turn-end':
      return finishTurn(state, event.summary);
  }
};

/** A session opened: its history committed, its model, agent, toggles and totals shown. */
const sessionOpened = (
  state: UiState,
  action: Extract<Action, { type: 'session-opened' }>,
): UiState => {
  const history = action.history.map((e, i) => ({ ...e, id: `e${state.nextId + i}` }));
  const next = {
    ...state,
    sessionId: action.sessionId,
    model: action.model,
    ...(action.agent ? { agent: action.agent } : {}),
    disabled: action.disabled ?? [],
    totals: {
      inputTokens: action.spent.usage.inputTokens,
      outputTokens: action.spent.usage.outputTokens,
      costUsd: action.spent.costUsd,
      turns: action.spent.turns,
    },
    committed: [...state.committed, ...history],
    nextId: state.nextId + history.length,
  };
  return action.note ? add(next, { kind: 'divider', text: action.note }) : next;
};

/** The user's message sent: a turn starts, waiting for the servers still starting. */
const submitted = (state: UiState, action: Extract<Action, { type: 'submit' }>): UiState => {
  const waitingFor = state.servers.filter((s) => s.state === 'starting').map((s) => s.name);
  const withTurn = {
    ...state,
    exitArmed: false,
    turn: { startedAt: action.now, started: false, waitingFor },
  };
  return add(withTurn, { kind: 'user', text: action.text, attachments: action.attachments });
};

/** A turn ended (or failed to): cards still running are cancelled, what was live is committed. */
const turnFinished = (
  state: UiState,
  action: Extract<Action, { type: 'turn-finished' }>,
): UiState => {
  const next = action.error
    ? add(state, { kind: 'notice', level: 'error', text: action.error })
    : state;
  return settle({
    ...next,
    turn: null,
    live: next.live.map((e) =>
      e.kind === 'tool' && e.status === 'running'
        ? { ...e, status: 'error' as const, summary: 'cancelled' }
        : e,
    ),
  });
};

/** A server's new state; a turn not started yet stops waiting for a server no longer starting. */
const serverStatus = (
  state: UiState,
  action: Extract<Action, { type: 'server-status' }>,
): UiState => {
  const known = state.servers.some((s) => s.name === action.status.name);
  const servers = known
    ? state.servers.map((s) => (s.name === action.status.name ? action.status : s))
    : [...state.servers, action.status];
  const turn =
    state.turn && !state.turn.started
      ? {
          ...state.turn,
          waitingFor: state.turn.waitingFor.filter(
            (name) => servers.find((s) => s.name === name)?.state === 'starting',
          ),
        }
      : state.turn;
  return { ...state, servers, turn };
};

/** A `!shell` command started: its entry goes live, running. */
const shellStarted = (
  state: UiState,
  action: Extract<Action, { type: 'shell-start' }>,
): UiState => ({
  ...state,
  live: [
    ...state.live,
    {
      kind: 'shell',
      id: `e${state.nextId}`,
      command: action.command,
      output: '',
      exitCode: null,
      running: true,
    },
  ],
  nextId: state.nextId + 1,
});

/** A `!shell` command ended: its output and exit code, then the live area settles. */
const shellEnded = (state: UiState, action: Extract<Action, { type: 'shell-end' }>): UiState =>
  settle(
    updateLive(
      state,
      (e) => e.kind === 'shell' && e.running,
      (e) => ({ ...e, output: action.output, exitCode: action.exitCode, running: false }),
    ),
  );

/** Pure: UI state and one action (a daemon event, a user action) → the next UI state. */
export const reducer = (state: UiState, action: Action): UiState => {
  switch (action.type) {
    case 'session-opened':
      return sessionOpened(state, action);
    case 'session-event':
      return onEvent(state, action.event, action.now);
    case 'submit':
      return submitted(state, action);
    case 'turn-finished':
      return turnFinished(state, action);
    case 'servers':
      return { ...state, servers: action.servers };
    case 'mcp-offers':
      return { ...state, offers: action.offers };
    case 'server-status':
      return serverStatus(state, action);
    case 'notice':
      return add(state, { kind: 'notice', level: action.level, text: action.text });
    case 'output':
      return add(state, { kind: 'output', title: action.title, text: action.text });
    case 'shell-start':
      return shellStarted(state, action);
    case 'shell-end':
      return shellEnded(state, action);
    case 'dialog-open':
      return { ...state, dialogs: [...state.dialogs, action.dialog] };
    case 'dialog-close':
      return { ...state, dialogs: state.dialogs.filter((d) => d.id !== action.id) };
    case 'exit-armed':
      return { ...state, exitArmed: action.armed };
    case 'toggle-expanded':
      return { ...state, expanded: !state.expanded };
    case 'model':
      return { ...state, model: action.model };
    case 'agent':
      return { ...state, agent: action.agent };
    case 'disabled':
      return { ...state, disabled: action.disabled };
    case 'extensions':
      return { ...state, extensions: extensionsOf(action) };
  }
};
