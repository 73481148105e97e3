import type { AttachedClient, PromptParams } from '../protocol.ts';
import type { ActiveTurn } from './requests.ts';
import { Session } from './session.ts';
import type { SessionDeps } from './session-deps.ts';

/**
 * The engine's sessions in memory: which front-end opened which, the turns running on them, and
 * when each may go. A session is held only while a front-end that opened it is attached or a turn
 * runs on it; the transcript is on disk, and a resume reads it back.
 */
export class SessionTable {
  readonly #idleWaiters: (() => void)[] = [];
  readonly #sessions = new Map<string, Session>();
  readonly #active = new Map<string, ActiveTurn>();
  /** The sessions each front-end opened: their SessionEnd hooks run when it goes. */
  readonly #opened = new Map<AttachedClient, Set<Session>>();
  /** Sessions let go (see `release`) whose transcripts are still being closed. */
  readonly #closing = new Map<string, Promise<void>>();

  constructor(private readonly deps: () => SessionDeps) {}

  /** Sessions held in memory now. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Turns running now. */
  get running(): number {
    return this.#active.size;
  }

  /** The session `id`: the one in memory, or resumed from its transcript. */
  session(id: string): Session {
    const session = this.#sessions.get(id);
    if (session) return session;
    const { session: resumed } = Session.resume(this.deps(), id);
    this.#sessions.set(id, resumed);
    return resumed;
  }

  /** The session `id` if it is in memory. */
  held(id: string): Session | undefined {
    return this.#sessions.get(id);
  }

  /** Waits until a session just let go is whole on disk (its transcript read back after). */
  async closed(id: string): Promise<void> {
    await this.#closing.get(id);
  }

  /** Holds `session` for `client` (a new one from the same front-end, /clear, ends the one it had). */
  hold(session: Session, client: AttachedClient, fresh: boolean): void {
    this.#sessions.set(session.id, session);
    if (fresh) this.endSessionsOf(client, 'clear');
    this.#opened.set(client, new Set([...(this.#opened.get(client) ?? []), session]));
  }

  /** A turn begins on `session`, asked by `client`. */
  begin(
    session: Session,
    turn: { client: AttachedClient; params: PromptParams; signal: AbortSignal },
  ): void {
    this.#active.set(session.id, turn);
  }

  /** The turn on `session` ended: those waiting for no turn to run are told, the session may go. */
  end(session: Session): void {
    this.#active.delete(session.id);
    if (this.#active.size === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
    this.release(session);
  }

  /**
   * SessionEnd hooks of the sessions `client` opened, those running a turn excepted; then each
   * goes from memory unless someone else holds it (`release`; one running a turn, once it ends).
   */
  endSessionsOf(client: AttachedClient, reason: string): void {
    const sessions = [...(this.#opened.get(client) ?? [])];
    this.#opened.delete(client);
    for (const session of sessions) {
      if (this.#active.has(session.id)) continue;
      void session.hooks.end(reason).finally(() => this.release(session));
    }
  }

  /**
   * Lets a session go from memory once nobody holds it — no attached front-end opened it and no
   * turn runs on it. A daemon serving one-shot commands all day kept every session it ever ran,
   * history and all; the transcript is on disk, and a resume reads it back.
   */
  release(session: Session): void {
    if (this.#active.has(session.id) || this.#sessions.get(session.id) !== session) return;
    for (const held of this.#opened.values()) if (held.has(session)) return;
    this.#sessions.delete(session.id);
    const closing = session.close().catch(() => undefined);
    this.#closing.set(session.id, closing);
    void closing.then(() => {
      if (this.#closing.get(session.id) === closing) this.#closing.delete(session.id);
    });
  }

  /** The front-end whose turn runs now: the one asked for approvals, elicitations and sampling. */
  activeTurn(): ActiveTurn | undefined {
    return [...this.#active.values()].at(-1);
  }

  /** Resolves when no turn runs (at once when none does), told by the turn that ends last. */
  whenIdle(): Promise<void> {
    if (this.#active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** The SessionEnd hooks of every session in memory (the engine closing). */
  async endAll(): Promise<void> {
    await Promise.allSettled([...this.#sessions.values()].map((s) => s.hooks.end('other')));
  }

  /** Every session's transcript closing: those let go, and those in memory. */
  closeAll(): Promise<void>[] {
    return [
      ...this.#closing.values(),
      ...[...this.#sessions.values()].map((session) => session.close()),
    ];
  }
}
