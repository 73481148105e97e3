import type { LoadedConfig } from '../extensions/workspace-config.ts';
import type { Config } from '../config/schema.ts';
import { NifflerError } from '../errors.ts';
import { usableExtensions } from '../extensions/load.ts';
import { findAgent } from '../extensions/turn.ts';
import type { Logger } from '../log.ts';
import type {
  AttachedClient,
  ParamsOf,
  RequestContext,
  ResultOf,
  SessionOpened,
} from '../protocol.ts';
import { mark } from '../../workers/shared/timeline.ts';
import { searchSessions } from './search-index.ts';
import { leftOutNotices, type ServersView } from './server-waits.ts';
import { Session } from './session.ts';
import type { SessionDeps } from './session-deps.ts';
import type { SessionTable } from './session-table.ts';
import type { SnapshotStore } from './snapshots.ts';
import type { TurnIO } from './tool-calls.ts';
import { listSessions, readTranscript } from './transcript.ts';
import { awaitTurnServers } from './turn-servers.ts';
import { trustOffer } from './ui-handlers.ts';
import { undoTurn } from './undo.ts';

type SessionMethod =
  | 'session/open'
  | 'session/prompt'
  | 'session/search'
  | 'session/list'
  | 'session/compact'
  | 'session/context'
  | 'session/undo'
  | 'session/toggle';

type Handlers<M extends SessionMethod> = {
  [K in M]: (params: ParamsOf<K>, context: RequestContext) => Promise<ResultOf<K>>;
};

/** What the `session/*` requests need of the engine. */
interface SessionsView {
  readonly sessions: SessionTable;
  sessionDeps(): SessionDeps;
  /** Where the workspace's transcripts are. */
  sessionsDir(): string;
  /** The config as last read (no re-read), and the one in force. */
  lastLoaded(): LoadedConfig | null;
  config(): Config;
  /** Why remembered approvals could not be read, if they could not. */
  approvalsProblem(): string | undefined;
  /** Starts the workspace's language servers (when a session opens). */
  warmLsp(): void;
  /** Starts the API worker again if the daemon ended it while unused (`ApiHost.rewarm`). */
  warmApi(): void;
  snapshots(): SnapshotStore;
  readonly servers: ServersView;
  onActivity(): void;
  warn: Logger['warn'];
}

/** A turn's events to the front-end that asked, and its questions to it. */
const turnIo = (client: AttachedClient, sessionId: string): TurnIO => ({
  emit: (event) => client.notify('session/event', { sessionId, event }),
  ask: (method, p, s) => client.ask(method, p, s),
});

/** The session `session/open` asks for: resumed, forked, or new. */
const openSession = async (
  view: SessionsView,
  params: ParamsOf<'session/open'>,
): Promise<{ session: Session; warnings: string[]; resumeId: string | undefined }> => {
  const deps = view.sessionDeps();
  let session: Session;
  let warnings: string[] = [];
  const resumeId =
    params.resume ?? (params.continue ? listSessions(view.sessionsDir())[0]?.id : undefined);
  if (params.continue && !resumeId)
    warnings.push('no earlier session in this workspace: starting a new one');
  // An unknown profile is an error, never a fallback to another one.
  const loaded = view.lastLoaded();
  if (params.agent && loaded) findAgent(usableExtensions(loaded).extensions, params.agent);
  // One just let go: its transcript is read back once it is whole on disk.
  if (resumeId) await view.sessions.closed(resumeId);
  if (resumeId && params.atTurn !== undefined)
    ({ session, warnings } = await Session.fork(deps, resumeId, params.atTurn));
  else if (resumeId) {
    const existing = view.sessions.held(resumeId);
    if (existing) session = existing;
    else ({ session, warnings } = Session.resume(deps, resumeId));
  } else
    session = Session.create(deps, {
      ...(params.agent ? { agent: params.agent } : {}),
      ...(params.disabled ? { disabled: params.disabled } : {}),
    });
  if (resumeId && params.agent) session.setAgent(params.agent);
  return { session, warnings, resumeId };
};

/** `session/open`: the session held for the front-end, and what it shows of it. */
const open = async (
  view: SessionsView,
  params: ParamsOf<'session/open'>,
  client: AttachedClient,
): Promise<SessionOpened> => {
  mark('session/open received');
  view.warmApi();
  const opened = await openSession(view, params);
  const { session } = opened;
  let { warnings } = opened;
  // A new session from the same front-end (/clear) ends the one it had.
  view.sessions.hold(session, client, !opened.resumeId);
  // The workspace's language servers start now, warm by the first edit.
  view.warmLsp();
  const loaded = view.lastLoaded();
  const offer = loaded ? trustOffer(loaded) : undefined;
  const problem = view.approvalsProblem();
  if (problem) warnings = [...warnings, problem];
  return {
    sessionId: session.id,
    messages: session.messages,
    warnings,
    model: view.config().model,
    spent: { turns: session.turns, usage: session.usage, costUsd: session.costUsd },
    ...(offer ? { trust: offer } : {}),
    agent: session.agent,
    disabled: [...session.disabled],
  };
};

/** `session/prompt`: one turn, once the servers it needs are done starting (bounded). */
const prompt = async (
  view: SessionsView,
  params: ParamsOf<'session/prompt'>,
  { client, signal }: RequestContext,
): Promise<ResultOf<'session/prompt'>> => {
  mark('prompt received');
  const session = view.sessions.session(params.sessionId);
  view.sessions.begin(session, { client, params, signal });
  view.onActivity();
  try {
    // A sick server holds no prompt up for long: the turn goes on without its tools.
    const statuses = await awaitTurnServers(view.servers, signal);
    return await session.prompt(
      params,
      turnIo(client, session.id),
      signal,
      leftOutNotices(statuses),
    );
  } finally {
    view.sessions.end(session);
    view.onActivity();
  }
};

/** The newest session of the workspace when none is named, or an error saying there is none. */
const sessionOr = (view: SessionsView, id: string | undefined, none: string): string => {
  const found = id ?? listSessions(view.sessionsDir())[0]?.id;
  if (!found) throw new NifflerError('usage', `no session in this workspace yet: ${none}`);
  return found;
};

/** The requests about finding sessions and about what they hold. */
const lookupHandlers = (
  view: SessionsView,
): Handlers<'session/search' | 'session/list' | 'session/context' | 'session/undo'> => ({
  'session/search': async ({ text, limit }) => {
    if (!text.trim())
      throw new NifflerError(
        'usage',
        'a session search needs words to look for: niffler sessions search WORDS, or /resume WORDS',
      );
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1))
      throw new NifflerError('usage', `a search limit is a whole number from 1, not ${limit}`);
    const found = await searchSessions(view.sessionsDir(), text, Math.min(limit ?? 20, 1000));
    for (const problem of found.problems) view.warn('session search', { problem });
    return found;
  },
  'session/list': async () =>
    listSessions(view.sessionsDir()).map(({ file: _file, ...summary }) => summary),
  'session/context': async ({ sessionId, model, cwd }, { signal }) => {
    const id = sessionOr(view, sessionId, 'start one with niffler');
    return view.sessions
      .session(id)
      .contextReport({ ...(model ? { model } : {}), ...(cwd ? { cwd } : {}) }, signal);
  },
  'session/undo': async ({ sessionId, turn, apply }) => {
    if (apply && view.sessions.running)
      throw new NifflerError('usage', 'a turn is running: undo once it has ended (Esc cancels it)');
    const id = sessionOr(view, sessionId, 'nothing to undo');
    const { entries } = readTranscript(view.sessionsDir(), id);
    return {
      sessionId: id,
      ...(await undoTurn(view.snapshots(), entries, { ...(turn ? { turn } : {}), apply })),
    };
  },
});

/** The `session/*` requests of the front-end protocol. */
export const sessionHandlers = (view: SessionsView): Handlers<SessionMethod> => ({
  'session/open': async (params, { client }) => open(view, params, client),
  'session/prompt': async (params, context) => prompt(view, params, context),
  'session/compact': async ({ sessionId, focus }, { client, signal }) => {
    const session = view.sessions.session(sessionId);
    return { notes: await session.compact(focus, turnIo(client, session.id), signal) };
  },
  'session/toggle': async ({ sessionId, name, enabled }) => {
    const session = view.sessions.session(sessionId);
    const disabled = session.toggle(name, enabled);
    await session.saved();
    return { disabled };
  },
  ...lookupHandlers(view),
});
