import { ProtocolError, SdkError, SdkErrorCode, type Client } from '@modelcontextprotocol/client';
import type { Health } from './backoff.ts';

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * Checks every `pingIntervalMs` that a connected server still answers: `ping` on a 2025-era
 * connection, `server/discover` on a 2026-07-28 one (which has no ping). A JSON-RPC error reply
 * means the server is alive; a timeout, a closed connection or a network error means it is not,
 * and `onDead` gets why. Returns the function that stops checking.
 */
export const watchHealth = (
  client: Client,
  health: Health,
  onDead: (reason: string) => void,
): (() => void) => {
  const { pingIntervalMs, pingTimeoutMs } = health;
  const modern = client.getProtocolEra() === 'modern';
  const method = modern ? 'server/discover' : 'ping';
  const check = modern
    ? () => client.discover({ timeout: pingTimeoutMs })
    : () => client.ping({ timeout: pingTimeoutMs });
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    check()
      .catch((error: unknown) => {
        if (ProtocolError.isInstance(error)) return;
        const timedOut = SdkError.isInstance(error) && error.code === SdkErrorCode.RequestTimeout;
        onDead(
          timedOut
            ? `stopped answering (no reply to ${method} within ${seconds(pingTimeoutMs)})`
            : `stopped answering (${method} failed: ${(error as Error).message})`,
        );
      })
      .finally(() => (busy = false));
  }, pingIntervalMs);
  return () => clearInterval(timer);
};
