/** What grep looks for. */
interface MatchSpec {
  pattern: string;
  ignoreCase: boolean;
  /** Matches may span lines, and `.` matches a newline too (ripgrep's -U --multiline-dotall). */
  multiline: boolean;
}

/**
 * Finds the lines of a text that match: `each(text, onLine)` calls `onLine(start, end)` with the
 * offsets of each matching line (end at its "\n" or the text's end), in order, once a line;
 * `onLine` returns false to stop.
 */
export interface LineMatcher {
  each(text: string, onLine: (start: number, end: number) => boolean): void;
}

const META = /[\\^$.*+?()[\]{}|]/;
const LOOKAROUND = /\(\?<?[=!]/;

/** ripgrep-style leading inline flags, `(?i)` and the like, as JavaScript flags. */
const inlineFlags = (pattern: string): { source: string; flags: string } => {
  const lead = /^\(\?([ims]+)\)/.exec(pattern);
  if (!lead) return { source: pattern, flags: '' };
  return { source: pattern.slice(lead[0].length), flags: [...new Set(lead[1])].join('') };
};

/** The compiled pattern, or the reason it is not a valid one. */
export const compileMatcher = (spec: MatchSpec): LineMatcher | { error: string } => {
  const { source, flags: inline } = inlineFlags(spec.pattern);
  const flags = new Set([...inline, 'm', ...(spec.ignoreCase ? ['i'] : [])]);
  if (spec.multiline) flags.add('s');
  let regex: RegExp;
  try {
    regex = new RegExp(source, [...flags, 'g'].join(''));
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (spec.multiline) return multilineMatcher(regex);
  if (!flags.has('i') && source !== '' && !META.test(source)) return literalMatcher(source);
  return lineMatcher(regex, new RegExp(source, [...flags].join('')), LOOKAROUND.test(source));
};

const lineEnd = (text: string, at: number): number => {
  const end = text.indexOf('\n', at);
  return end === -1 ? text.length : end;
};

/** A pattern without special characters: found with indexOf. */
const literalMatcher = (literal: string): LineMatcher => ({
  each(text, onLine) {
    for (let at = text.indexOf(literal); at !== -1;) {
      const end = lineEnd(text, at);
      if (!onLine(text.lastIndexOf('\n', at - 1) + 1, end)) return;
      at = end >= text.length ? -1 : text.indexOf(literal, end + 1);
    }
  },
});

/**
 * A pattern run over the whole text (one pass, not one per line), each hit then checked on its
 * line alone when it ran past the line's end or looks around: line by line, as grep matches.
 */
const lineMatcher = (global: RegExp, single: RegExp, looksAround: boolean): LineMatcher => ({
  each(text, onLine) {
    let from = 0;
    while (from <= text.length) {
      global.lastIndex = from;
      const hit = global.exec(text);
      if (!hit) return;
      const start = text.lastIndexOf('\n', hit.index - 1) + 1;
      const end = lineEnd(text, hit.index);
      const within = hit.index + hit[0].length <= end && !looksAround;
      if ((within || single.test(text.slice(start, end))) && !onLine(start, end)) return;
      from = end + 1;
    }
  },
});

/** Matches that may span lines: every line a match touches, once. */
const multilineMatcher = (global: RegExp): LineMatcher => ({
  each(text, onLine) {
    let from = 0;
    let next = 0; // the first offset of a line not reported yet
    while (from <= text.length) {
      global.lastIndex = from;
      const hit = global.exec(text);
      if (!hit) return;
      const last = hit.index + Math.max(hit[0].length - 1, 0);
      let start = Math.max(text.lastIndexOf('\n', hit.index - 1) + 1, next);
      while (start <= last && start <= text.length) {
        const end = lineEnd(text, start);
        if (!onLine(start, end)) return;
        next = start = end + 1;
      }
      from = Math.max(hit.index + hit[0].length, hit.index + 1);
    }
  },
});

/**
 * Text every match must contain, or null when none can be told: the pattern itself when it has no
 * special character, else the literal run it starts with — unless an alternative at its top level
 * (`a|b`) or a quantifier on its last character (`ab?`) makes that run optional. A window without
 * it is never decoded nor matched. Case-insensitive patterns have none.
 */
export const requiredText = (spec: MatchSpec): string | null => {
  const { source, flags } = inlineFlags(spec.pattern);
  if (spec.ignoreCase || flags.includes('i')) return null;
  if (topLevelAlternation(source)) return null;
  let literal = '';
  const start = /^(\^|\\b)*/.exec(source)![0].length; // anchors first: no text of their own
  for (let i = start; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined || /[\w]/.test(next)) break; // \d, \w, \b, \1…: not a literal
      literal += next;
      i++;
      continue;
    }
    if (META.test(c)) {
      if (c === '?' || c === '*' || c === '{') literal = literal.slice(0, -1);
      break;
    }
    literal += c;
  }
  return literal.length >= 3 ? literal : null;
};

/** True when `source` has a `|` outside any group or class. */
const topLevelAlternation = (source: string): boolean => {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return true;
  }
  return false;
};
