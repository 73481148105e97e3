import { AsyncLocalStorage } from 'node:async_hooks';

/** One request in flight: its server, its tool (none for other requests), who made it. */
export interface CallScope {
  server: string;
  tool: string | undefined;
  asker: number | undefined;
  /** The request's own signal: what its `input_required` rounds are told apart by. */
  signal?: AbortSignal;
  /** The call waits for a slot of its server: it has not reached the server yet. */
  queued?: boolean;
  /**
   * Set by a tool call while it holds one of its server's slots: runs `wait` (the call waits for
   * an answer to what its server asked, which may take a person minutes, or never come) with the
   * slot given back, then takes one again.
   */
  whileAnswering?: <T>(wait: () => Promise<T>) => Promise<T>;
}

const scope = new AsyncLocalStorage<CallScope>();
/** Calls in flight by their signal. */
const bySignal = new WeakMap<AbortSignal, CallScope>();
/** Calls in flight per server, oldest first. */
const inFlight = new Map<string, CallScope[]>();

/**
 * Runs `call` as the call `entry`, which it is given: what the server asks meanwhile can be told
 * apart. The call's own code gets its entry as an argument, not from an async context: an
 * `AsyncLocalStorage.run` around every call cost the MCP worker ~2 µs of its ~25 µs per call, and
 * nothing the server asks arrives in the call's context anyway (its requests come off the
 * transport; a 2026-07-28 server's `input_required` rounds are put back by `withinCallOf`).
 */
export const inCallScope = async <T>(
  entry: CallScope,
  call: (entry: CallScope) => Promise<T>,
): Promise<T> => {
  const list = inFlight.get(entry.server) ?? [];
  list.push(entry);
  inFlight.set(entry.server, list);
  if (entry.signal) bySignal.set(entry.signal, entry);
  try {
    return await call(entry);
  } finally {
    if (entry.signal) bySignal.delete(entry.signal);
    list.splice(list.indexOf(entry), 1);
    if (list.length === 0) inFlight.delete(entry.server);
  }
};

/**
 * Runs `run` as part of the call whose signal is `signal` (when one is in flight): the SDK
 * fulfils a 2026-07-28 server's `input_required` where the answer arrived, outside the call's
 * async context, and this puts the call back around it.
 */
export const withinCallOf = <T>(signal: AbortSignal | undefined, run: () => T): T => {
  const entry = signal ? bySignal.get(signal) : undefined;
  return entry ? scope.run(entry, run) : run();
};

/**
 * The call a request of `server` belongs to: the one whose round it is (an `input_required`
 * round of a 2026-07-28 server, run inside `withinCallOf`), else the latest call in flight on that
 * server that reached it, not one still queued for a slot (a 2025 server's request carries no
 * reference to the call it serves); none when no call runs.
 */
export const relatedCall = (server: string): CallScope | undefined => {
  const current = scope.getStore();
  if (current?.server === server) return current;
  const calls = inFlight.get(server);
  return calls?.findLast((call) => !call.queued) ?? calls?.at(-1);
};

/**
 * Runs `wait` — an answer to a request of `server` (elicitation, sampling) — without holding the
 * slot of the call it belongs to: a call waiting for its consumer leaves the server to others.
 */
export const awaitAnswer = <T>(server: string, wait: () => Promise<T>): Promise<T> => {
  const call = relatedCall(server);
  return call?.whileAnswering ? call.whileAnswering(wait) : wait();
};

/**
 * True when a request of `server` cannot be told to belong to one caller: it came outside any
 * call's async context (a 2025 server's request names no call), and the calls in flight on the
 * server that reached it were made by more than one caller (a gateway client and a session, two
 * clients). Putting it to either might show one caller's question to another, or let another
 * answer it.
 */
export const ambiguousCaller = (server: string): boolean => {
  if (scope.getStore()?.server === server) return false;
  const reached = (inFlight.get(server) ?? []).filter((call) => !call.queued);
  return new Set(reached.map((call) => call.asker)).size > 1;
};
