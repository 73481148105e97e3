import { whenAborted } from './abort.ts';

/** A `fetch`, as the MCP SDK's transports take one (their `FetchLike`). */
type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** True for a status a `Response` with a body can be made with (200–599 but 204, 205, 304). */
const bodyStatus = (status: number): boolean =>
  status >= 200 && status <= 599 && status !== 204 && status !== 205 && status !== 304;

/** Detaches, once, what a body nobody read nor cancelled still holds when it is collected. */
const unread = new FinalizationRegistry<() => void>((detach) => detach());

/**
 * `base` with each request given an abort signal of its own, which follows the caller's for as
 * long as the request and its response body are in progress and is let go of when they end.
 *
 * Why: undici's `Request` (Node's `fetch`) adds an abort listener to the signal it is given and
 * removes it only when the request is garbage-collected (a FinalizationRegistry), raising that
 * signal's listener limit to 1500 on the way. A caller that hands one long-lived signal to every
 * request — the MCP SDK's HTTP client transports hand their lifetime signal to every 2025-era
 * POST and notification — piles up one listener per request on it until a GC: thousands in a
 * busy process, each add walking the list, and past 1500 a MaxListenersExceededWarning per
 * request. `AbortSignal.any([signal])` is no way out: on Node 22 each call leaves an entry on a
 * long-lived source that no GC prunes (nodejs/node#55351, #64476).
 */
export const fetchWithOwnSignal =
  (base: Fetch = fetch): Fetch =>
  async (url, init) => {
    const outer = init?.signal;
    if (!outer || outer.aborted) return base(url, init);
    const own = new AbortController();
    const detach = whenAborted(outer, () => own.abort(outer.reason));
    let response: Response;
    try {
      response = await base(url, { ...init, signal: own.signal });
    } catch (error) {
      detach();
      throw error;
    }
    if (!response.body || !bodyStatus(response.status)) {
      detach();
      return response;
    }
    return untilBodyEnds(response, detach);
  };

/**
 * `response` with a body that calls `end` when it is read to its end, fails or is cancelled (or,
 * read by nobody, is collected); status, headers, url, type and `redirected` kept.
 */
const untilBodyEnds = (response: Response, end: () => void): Response => {
  const reader = response.body!.getReader();
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    unread.unregister(reader);
    end();
  };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            finish();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          finish();
          controller.error(error);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  unread.register(body, end, reader);
  const wrapped = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperties(wrapped, {
    url: { value: response.url },
    type: { value: response.type },
    redirected: { value: response.redirected },
  });
  return wrapped;
};
