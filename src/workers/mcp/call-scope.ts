import { AsyncLocalStorage } from 'node:async_hooks';

/** One request in flight: its server, its tool (none for other requests), who made it. */
export interface CallScope {
  server: string;
  tool: string | undefined;
  asker: number | undefined;
}

const scope = new AsyncLocalStorage<CallScope>();
/** Calls in flight per server, oldest first. */
const inFlight = new Map<string, CallScope[]>();

/** Runs `call` as the tool call `entry`: what the server asks meanwhile can be told apart. */
export const inCallScope = async <T>(entry: CallScope, call: () => Promise<T>): Promise<T> => {
  const list = inFlight.get(entry.server) ?? [];
  list.push(entry);
  inFlight.set(entry.server, list);
  try {
    return await scope.run(entry, call);
  } finally {
    list.splice(list.indexOf(entry), 1);
    if (list.length === 0) inFlight.delete(entry.server);
  }
};

/**
 * The call a request of `server` belongs to: the one whose async context it runs in (an
 * `input_required` round of a 2026-07-28 server), else the latest call in flight on that server
 * (a 2025 server's request carries no reference to the call it serves); none when no call runs.
 */
export const relatedCall = (server: string): CallScope | undefined => {
  const current = scope.getStore();
  if (current?.server === server) return current;
  return inFlight.get(server)?.at(-1);
};
