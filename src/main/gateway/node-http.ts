import type http from 'node:http';

/** The largest request body the gateway reads (what the SDK's HTTP entry takes too). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A request body, or `null` when it is over `MAX_BODY_BYTES` (reading stops there). */
export const readBody = async (req: http.IncomingMessage): Promise<Buffer | null> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
};

/**
 * A web `Request` of a node request whose body was read; `signal` aborts when the client goes
 * away before its answer was sent.
 */
export const toWebRequest = (
  req: http.IncomingMessage,
  body: Buffer,
  origin: string,
  signal: AbortSignal,
): Request => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  const method = req.method ?? 'GET';
  return new Request(new URL(req.url ?? '/', origin), {
    method,
    headers,
    signal,
    ...(method !== 'GET' && method !== 'HEAD' && body.length ? { body: new Uint8Array(body) } : {}),
  });
};

/** Writes a web `Response` to a node response, streaming its body (SSE) as it comes. */
export const sendWebResponse = async (
  response: Response,
  res: http.ServerResponse,
): Promise<void> => {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The stream was cancelled (the client went away) or failed: nothing more to send.
  }
  res.end();
};

/** A JSON-RPC error as an HTTP answer. */
export const jsonRpcError = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: '2.0', id: null, error: { code, message } }, { status });
