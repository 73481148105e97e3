import { describe, expect, it } from 'vitest';
import { frame, FrameReader } from '../../../src/main/daemon/frames.ts';

// The one-shot client's framing (src/main/daemon/one-shot.ts), read back whatever the chunking.
describe('one-shot framing', () => {
  const messages = [
    { id: 1, result: { ok: true, root: '/home/zoë/répo' } },
    { method: 'progress', params: { token: 't', progress: 1, message: '→ ✓ 日本' } },
    {
      id: 2,
      error: { code: -32001, message: 'config is broken', data: { code: 'config-invalid' } },
    },
  ];
  const stream = Buffer.from(messages.map(frame).join(''));

  it('counts the length in bytes, not characters', () => {
    const [header, body] = frame(messages[1]!).split('\r\n\r\n') as [string, string];
    expect(header).toBe(`Content-Length: ${Buffer.byteLength(body)}`);
    expect(Buffer.byteLength(body)).toBeGreaterThan(body.length);
  });

  it('reads every message with the stream split at every byte', () => {
    for (let at = 0; at <= stream.length; at++) {
      const reader = new FrameReader();
      const read = [...reader.push(stream.subarray(0, at)), ...reader.push(stream.subarray(at))];
      expect(read).toEqual(messages.map((m) => ({ jsonrpc: '2.0', ...m })));
    }
  });

  it('reads a stream fed one byte at a time, and headers in any case and order', () => {
    const reader = new FrameReader();
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, result: 'é' });
    const text = `content-type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const read = [...Buffer.from(text)].flatMap((byte) => reader.push(Buffer.from([byte])));
    expect(read).toEqual([{ jsonrpc: '2.0', id: 7, result: 'é' }]);
  });

  it('throws on a frame with no length, naming what it got', () => {
    expect(() => new FrameReader().push(Buffer.from('Content-Type: x\r\n\r\n{}'))).toThrow(
      /without a Content-Length header \("Content-Type: x"\)/,
    );
  });
});
