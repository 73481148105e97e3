import type { EngineClient } from '../../main/daemon/client.ts';

/** The part of the engine connection the UI uses. */
export type EngineApi = Pick<EngineClient, 'request' | 'onNotification' | 'onRequest'>;

/**
 * An engine connection usable before it exists: requests wait for it, listeners attach once it
 * is there. Lets the first frame draw while the daemon connection is still being made; if the
 * connection fails, every request fails with its error.
 */
export const deferClient = (pending: Promise<EngineClient>): EngineApi => ({
  request: async (method, params, signal) => (await pending).request(method, params, signal),
  onNotification: (name, listener) => {
    let off: (() => void) | undefined;
    let removed = false;
    pending.then(
      (client) => {
        if (!removed) off = client.onNotification(name, listener);
      },
      () => {},
    );
    return () => {
      removed = true;
      off?.();
    };
  },
  onRequest: (method, handler) => {
    pending.then(
      (client) => client.onRequest(method, handler),
      () => {},
    );
  },
});
