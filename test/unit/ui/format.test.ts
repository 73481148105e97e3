import { describe, expect, it } from 'vitest';
import { formatArgs } from '../../../src/ui/app/format.ts';
import { truncate } from '../../../src/ui/render/format.ts';
import { summarizeResult } from '../../../src/ui/render/turn.ts';

describe('truncate', () => {
  it('keeps text up to max characters and cuts longer text to max with an ellipsis', () => {
    expect(truncate('abcde', 5)).toBe('abcde');
    expect(truncate('abcdef', 5)).toBe('abcd…');
  });
});

describe('cut previews', () => {
  it('cuts each argument value at 40 characters and the whole line at max', () => {
    expect(formatArgs({ text: 'x'.repeat(50) })).toBe(`text: "${'x'.repeat(39)}…"`);
    expect(formatArgs({ a: 1, b: 2, c: 3 }, 10)).toBe('a: 1, b: …');
  });

  it('cuts the first line of a tool result at 100 characters', () => {
    expect(summarizeResult({ ok: true, output: `${'y'.repeat(120)}\nmore` })).toBe(
      `${'y'.repeat(99)}… (+1 lines)`,
    );
  });
});
