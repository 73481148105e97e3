// The framing of the daemon's JSON-RPC (vscode-jsonrpc's, the LSP base protocol): a
// Content-Length header, a blank line, then the JSON. For clients that speak it without the
// library (one-shot.ts); no imports, so a bundle that takes it takes nothing else.

/** One message framed as the daemon's JSON-RPC library reads it (LSP base protocol). */
export const frame = (message: object): string => {
  const body = JSON.stringify({ jsonrpc: '2.0', ...message });
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/** Splits the daemon's byte stream into its messages, however the stream is chunked. */
export class FrameReader {
  #buffer: Buffer = Buffer.alloc(0);

  /** Adds a chunk; returns the messages it completes. Throws on a frame it cannot read. */
  push(chunk: Buffer): unknown[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const messages: unknown[] = [];
    for (;;) {
      const headerEnd = this.#buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return messages;
      const headers = this.#buffer.subarray(0, headerEnd).toString('ascii');
      const length = /^content-length: *(\d+) *$/im.exec(headers)?.[1];
      if (length === undefined)
        throw new Error(`a message without a Content-Length header (${JSON.stringify(headers)})`);
      const start = headerEnd + 4;
      const end = start + Number(length);
      if (this.#buffer.length < end) return messages;
      messages.push(JSON.parse(this.#buffer.subarray(start, end).toString('utf8')));
      this.#buffer = this.#buffer.subarray(end);
    }
  }
}
