import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readSpilled } from '../../../src/workers/mcp/spill.ts';
import { SpillingParser } from '../../../src/workers/mcp/spill-parser.ts';

const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-spill-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** `value` as JSON, the second emoji written as a surrogate pair of escapes. */
const toJson = (value: unknown) => JSON.stringify(value).replaceAll('😀 /', '\\ud83d\\ude00 /');

/** Parses `json` fed in pieces of `size` bytes; files for spilled text go to `dir`. */
const parse = (json: string, size: number, keepChars: number, dir: string) => {
  let n = 0;
  const parser = new SpillingParser(keepChars, () => path.join(dir, `spill-${++n}.txt`));
  const bytes = Buffer.from(json);
  for (let at = 0; at < bytes.length; at += size) parser.push(bytes.subarray(at, at + size));
  return parser.end();
};

// Escapes, a surrogate pair written both ways, two- three- and four-byte characters.
const TEXT = 'line "one"\\\n\ttab é € 😀 \ud83d\ude00 / end\u0001';
const response = (text: string) => ({
  jsonrpc: '2.0',
  id: 7,
  result: {
    content: [
      { type: 'text', text },
      { type: 'image', data: 'aGk=', mimeType: 'image/png' },
    ],
    structuredContent: {
      n: -1.5e3,
      ok: true,
      none: null,
      list: [1, [2, {}]],
      ['__proto__']: 'key',
    },
    isError: false,
  },
});

describe('reading a JSON-RPC message in pieces, long result text to a file', () => {
  it('gives what JSON.parse gives for text within the limit, however the bytes are split', () => {
    const dir = tempDir();
    const json = toJson(response(TEXT)).replace('"id":7', '"id" : 7 ');
    expect(json).toContain('\\ud83d\\ude00');
    for (const size of [1, 2, 3, 5, 7, 64, 4096])
      expect(parse(json, size, 1000, dir), `pieces of ${size}`).toEqual(JSON.parse(json));
  });

  it('keeps the start of a long text and saves all of it, decoded, to a file', () => {
    const dir = tempDir();
    const long = TEXT.repeat(50);
    const json = toJson(response(long));
    for (const size of [1, 3, 7, 4096]) {
      const value = parse(json, size, 20, dir) as ReturnType<typeof response>;
      const spilled = readSpilled(value.result.content[0]!.text!);
      expect(spilled?.start, `pieces of ${size}`).toBe(long.slice(0, 20));
      expect(spilled?.info.chars).toBe(long.length);
      expect(readFileSync(spilled!.info.file, 'utf8')).toBe(long);
      expect(value.result.content[1]).toEqual(response(long).result.content[1]);
      expect(value.result.structuredContent).toEqual(JSON.parse(json).result.structuredContent);
    }
  });

  it('spills nothing but result text: a long string elsewhere stays whole', () => {
    const dir = tempDir();
    const json = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [], other: 'x'.repeat(500) },
    });
    expect(parse(json, 7, 20, dir)).toEqual(JSON.parse(json));
  });

  it('rejects what is not JSON', () => {
    const dir = tempDir();
    for (const bad of ['{"a":}', '{"a" 1}', '[1 2]', '{"a":1', 'nul', '{"a":1}x'])
      expect(() => parse(bad, 2, 20, dir), bad).toThrow(SyntaxError);
  });
});
