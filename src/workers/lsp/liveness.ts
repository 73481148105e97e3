import type { LspTiming } from '../protocol/lsp.ts';
import { formatBytes } from '../shared/bounded-read.ts';

/** A server that sends more than `floodBytes` within this is ended (and restarted). */
const FLOOD_WINDOW_MS = 10_000;

/**
 * Whether a server is alive and well, from what it sends and what it is asked: when it was last
 * heard from, the requests it has not answered yet, and the bytes of its latest flood window.
 */
export class Liveness {
  /** When the server last sent anything. */
  lastHeard = 0;
  /** Requests the server has not answered yet (cancelled ones too), and since when. */
  #pending = 0;
  #pendingSince = 0;
  #flood = { since: 0, bytes: 0 };

  constructor(private readonly timing: Required<LspTiming>) {}

  /** A chunk of `bytes` came from the server: it is alive; what to end it for when it floods. */
  heard(bytes: number): string | undefined {
    const now = Date.now();
    this.lastHeard = now;
    if (now - this.#flood.since > FLOOD_WINDOW_MS) this.#flood = { since: now, bytes: 0 };
    this.#flood.bytes += bytes;
    const { floodBytes } = this.timing;
    if (this.#flood.bytes <= floodBytes) return undefined;
    this.#flood = { since: now, bytes: 0 };
    return `sent more than ${formatBytes(floodBytes)} within ${FLOOD_WINDOW_MS / 1000} s (a flood); ended`;
  }

  /** Counts a request until the server answers it, while `current` (the same connection). */
  track(request: Promise<unknown>, current: () => boolean): void {
    if (this.#pending++ === 0) this.#pendingSince = Date.now();
    void request
      .catch(() => undefined)
      .finally(() => {
        if (current()) this.#pending--;
      });
  }

  /** The connection went: its requests are answered by nobody. */
  forget(): void {
    this.#pending = 0;
  }

  /** What to end a server for that, asked something, has said nothing for `hungAfterMs`. */
  hung(): string | undefined {
    const { hungAfterMs } = this.timing;
    const silent = Date.now() - Math.max(this.lastHeard, this.#pendingSince);
    if (this.#pending > 0 && silent > hungAfterMs)
      return `answered nothing for ${hungAfterMs / 1000} s while asked (hung); ended`;
    return undefined;
  }
}
