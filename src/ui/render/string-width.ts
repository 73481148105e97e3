// string-width for the bundles (scripts/build-options.mjs points Ink's and its helpers' imports of
// `string-width` here). string-width measures anything but printable ASCII by grapheme clusters
// (Intl.Segmenter) and Unicode-property regexes (RGI_Emoji and others, compiled on first use,
// ~5 ms for that one alone), cluster by cluster; the interactive front-end's first frame met that
// with the input box's round border alone (38 ms of its first frame, in an A/B of the builds with
// and without this file). For text whose every code point is its own grapheme cluster
// and no emoji sequence can start — the ranges below: Latin, punctuation, symbols, arrows, box
// drawing, shapes, dingbats — the width is the sum of each code point's East Asian Width, which is
// what string-width's own path computes for such text (test/unit/ui/string-width.test.ts compares
// the two over every code point of the ranges). Anything else goes to string-width itself.
import stringWidth from 'string-width';
import { eastAsianWidth } from 'get-east-asian-width';

interface Options {
  readonly ambiguousIsNarrow?: boolean;
  readonly countAnsiEscapeCodes?: boolean;
}

const ASCII = /^[\u0020-\u007E]*$/;

/**
 * Code points with the Grapheme_Cluster_Break property Other (none extends, joins or prepends),
 * neither control, format nor default-ignorable, and none an emoji sequence's start but as itself:
 * Latin-1 and Latin Extended to Spacing Modifiers (not U+00AD, soft hyphen), General Punctuation
 * but its spaces and formats, superscripts and currency (not the combining marks from U+20D0), and
 * letterlike symbols through Miscellaneous Symbols and Arrows.
 */
export const SIMPLE =
  /^[\u0020-\u007E\u00A0-\u00AC\u00AE-\u02FF\u2010-\u2027\u2030-\u205E\u2070-\u20CF\u2100-\u2BFF]*$/;

export default function width(text: string, options: Options = {}): number {
  if (typeof text !== 'string' || text.length === 0) return 0;
  if (ASCII.test(text)) return text.length;
  if (!SIMPLE.test(text)) return stringWidth(text, options);
  const wide = { ambiguousAsWide: options.ambiguousIsNarrow === false };
  let sum = 0;
  for (const character of text) sum += eastAsianWidth(character.codePointAt(0)!, wide);
  return sum;
}
