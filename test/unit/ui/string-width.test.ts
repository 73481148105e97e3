import { describe, expect, it } from 'vitest';
import stringWidth from 'string-width';
import width, { SIMPLE } from '../../../src/ui/render/string-width.ts';

// Every code point the fast path takes, from SIMPLE's own ranges.
const simpleCodePoints = (): string[] => {
  const out: string[] = [];
  for (let cp = 0; cp <= 0xffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const character = String.fromCodePoint(cp);
    if (SIMPLE.test(character)) out.push(character);
  }
  return out;
};

describe('string-width for the bundles', () => {
  const characters = simpleCodePoints();

  it('takes the ranges it names, and none of the joiners, marks or formats', () => {
    expect(characters.length).toBeGreaterThan(3000);
    for (const joiner of [
      '\u00AD',
      '\u0301',
      '\u200B',
      '\u200D',
      '\u2028',
      '\u2060',
      '\u20D0',
      '\uFE0F',
      '\u1100',
      '\u0009',
      '\u001B',
      '\u0085',
    ])
      expect(SIMPLE.test(joiner)).toBe(false);
  });

  it("gives string-width's width for every code point of its ranges, both ways of ambiguous", () => {
    const differ: string[] = [];
    for (const character of characters)
      for (const ambiguousIsNarrow of [true, false])
        if (
          width(character, { ambiguousIsNarrow }) !== stringWidth(character, { ambiguousIsNarrow })
        )
          differ.push(`U+${character.codePointAt(0)!.toString(16)} ${ambiguousIsNarrow}`);
    expect(differ).toEqual([]);
  });

  it('takes only code points that are each their own grapheme cluster, whatever is beside them', () => {
    const segmenter = new Intl.Segmenter();
    const count = (text: string) => [...segmenter.segment(text)].length;
    const joined: string[] = [];
    for (const character of characters)
      if (
        count(`a${character}a`) !== 3 ||
        count(character + character) !== 2 ||
        count(`\u1100${character}\u1161`) !== 3 ||
        count(`\u{1F1E6}${character}`) !== 2
      )
        joined.push(`U+${character.codePointAt(0)!.toString(16)}`);
    expect(joined).toEqual([]);
  });

  it('agrees with string-width on mixed text, borders and what it hands on', () => {
    // A fixed-seed generator: the same strings on every run.
    let seed = 0x2545f491;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const others = [
      '\u4e00',
      '\u{1F600}',
      '\u2764\uFE0F',
      'e\u0301',
      '\u001B[31m',
      '\u200D',
      '\uFF21',
      '\u00AD',
      '\t',
      '\u{1F1E6}\u{1F1E8}',
    ];
    const samples = [
      '╭' + '─'.repeat(98) + '╮',
      '│ > message │',
      '· niffler 0.1.0 · /tmp/x',
      '',
      'plain ASCII',
    ];
    for (let i = 0; i < 3000; i++) {
      let text = '';
      const length = 1 + Math.floor(next() * 30);
      for (let j = 0; j < length; j++)
        text +=
          next() < 0.1
            ? others[Math.floor(next() * others.length)]
            : characters[Math.floor(next() * characters.length)];
      samples.push(text);
    }
    for (const text of samples)
      for (const options of [{}, { ambiguousIsNarrow: false }, { countAnsiEscapeCodes: true }])
        expect([text, width(text, options)]).toEqual([text, stringWidth(text, options)]);
  });
});
