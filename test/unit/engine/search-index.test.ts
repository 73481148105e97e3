import { describe, expect, it } from 'vitest';
import { indexEntry } from '../../../src/main/engine/search-index.ts';

describe('search index entries', () => {
  it('keeps every word of a long session within the cap, tabs and newlines flattened', () => {
    const filler = Array.from({ length: 40_000 }, (_, i) => `w${i % 500}`).join(' ');
    const entry = indexEntry(
      [
        { role: 'user', content: 'Fix\tthe\nBUILD please' },
        {
          role: 'assistant',
          content: filler,
          toolCalls: [{ id: 'c', name: 'run_tests', args: {} }],
        },
        { role: 'user', content: `${filler} then the Zebrafish near the end` },
        { role: 'assistant', content: 'done' },
      ],
      '2025-01-01T00:00:00.000Z',
    );
    expect(entry.title).toBe('Fix the BUILD please');
    expect(entry.text.startsWith('fix the build please')).toBe(true);
    expect(entry.text).not.toMatch(/[\t\n]/);
    expect(entry.text.length).toBeLessThanOrEqual(64 * 1024);
    for (const word of ['zebrafish', 'run_tests', 'done', 'w499'])
      expect(entry.text).toContain(word);
  });
});
