import type { Transport } from '@modelcontextprotocol/client';

type OnMessage = NonNullable<Transport['onmessage']>;
type Delivery = Parameters<OnMessage>;

const isProgress = (message: Delivery[0]): boolean =>
  'method' in message && !('id' in message) && message.method === 'notifications/progress';

/**
 * Makes the SDK's `Client` see a server's progress notifications before the response they precede.
 *
 * The SDK runs a notification handler one microtask after it receives the notification, but
 * handles a response at once, and handling the response forgets the request's progress handler.
 * So when a server's last `notifications/progress` and its result arrive in one read (adjacent
 * writes; common on a busy machine), the last progress is dropped with "unknown token"
 * (modelcontextprotocol/typescript-sdk#2580). Here, whatever arrives in the same turn after a
 * progress notification is handed on one microtask later, in order, after that notification's
 * handler has run. Messages with no progress before them pass straight through.
 *
 * The transport keeps its own class (its `pid`, `finishAuth` and the rest); only its `onmessage`
 * property, which `Protocol.connect` assigns, is wrapped.
 */
export const keepProgressInOrder = <T extends Transport>(transport: T): T => {
  let handler: OnMessage | undefined;
  let held: Delivery[] | undefined;
  // A progress among the released messages holds the ones after it again, behind its handler.
  const release = () => {
    const queue = held ?? [];
    held = undefined;
    for (const delivery of queue) deliver(...delivery);
  };
  const deliver: OnMessage = (message, extra) => {
    if (held) {
      held.push([message, extra]);
      return;
    }
    handler?.(message, extra);
    if (isProgress(message)) {
      held = [];
      queueMicrotask(release);
    }
  };
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => (handler ? deliver : undefined),
    set: (next: OnMessage | undefined) => (handler = next),
  });
  return transport;
};
