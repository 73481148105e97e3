import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { matchesName } from '../../src/main/name-glob.ts';

describe('tool-name globs', () => {
  it('match as picomatch does: exact names, globs, braces, classes', () => {
    const names = [
      'github__create_issue',
      'github__list',
      'read_file',
      'bash',
      'mcp__x',
      'a__b__c',
    ];
    const patterns = [
      'github__*',
      'read_*',
      'bash',
      '*__list',
      '{bash,read_file}',
      'git?ub__*',
      '[gm]*__*',
      'a__*',
      'nothing*',
      'github__create_issue',
    ];
    for (const pattern of patterns)
      for (const name of names)
        expect([pattern, name, matchesName(name, pattern)]).toEqual([
          pattern,
          name,
          picomatch.isMatch(name, pattern),
        ]);
  });

  it('answers the same after many patterns came and went (the compiled ones are bounded)', () => {
    for (let i = 0; i < 2000; i++) expect(matchesName(`tool_${i}`, `tool_${i}*`)).toBe(true);
    expect(matchesName('github__list', 'github__*')).toBe(true);
    expect(matchesName('gitlab__list', 'github__*')).toBe(false);
  });
});
