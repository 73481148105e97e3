/** The composer's text and cursor (an index into `text`). Every edit is a pure function. */
export interface EditorState {
  text: string;
  cursor: number;
}

export const emptyEditor: EditorState = { text: '', cursor: 0 };

export const editorOf = (text: string): EditorState => ({ text, cursor: text.length });

export const insert = (s: EditorState, chars: string): EditorState => ({
  text: s.text.slice(0, s.cursor) + chars + s.text.slice(s.cursor),
  cursor: s.cursor + chars.length,
});

export const backspace = (s: EditorState): EditorState =>
  s.cursor === 0
    ? s
    : { text: s.text.slice(0, s.cursor - 1) + s.text.slice(s.cursor), cursor: s.cursor - 1 };

export const deleteForward = (s: EditorState): EditorState =>
  s.cursor >= s.text.length
    ? s
    : { text: s.text.slice(0, s.cursor) + s.text.slice(s.cursor + 1), cursor: s.cursor };

export const moveBy = (s: EditorState, delta: number): EditorState => ({
  ...s,
  cursor: Math.max(0, Math.min(s.text.length, s.cursor + delta)),
});

const lineStart = (s: EditorState): number => s.text.lastIndexOf('\n', s.cursor - 1) + 1;
const lineEnd = (s: EditorState): number => {
  const end = s.text.indexOf('\n', s.cursor);
  return end < 0 ? s.text.length : end;
};

export const home = (s: EditorState): EditorState => ({ ...s, cursor: lineStart(s) });
export const end = (s: EditorState): EditorState => ({ ...s, cursor: lineEnd(s) });

/** Ctrl-U: deletes from the start of the line to the cursor. */
export const killToStart = (s: EditorState): EditorState => {
  const start = lineStart(s);
  return { text: s.text.slice(0, start) + s.text.slice(s.cursor), cursor: start };
};

/** Ctrl-W: deletes the word before the cursor. */
export const killWord = (s: EditorState): EditorState => {
  const before = s.text.slice(0, s.cursor).replace(/\S+\s*$|\s+$/, '');
  return { text: before + s.text.slice(s.cursor), cursor: before.length };
};

export const isOnFirstLine = (s: EditorState): boolean => !s.text.slice(0, s.cursor).includes('\n');
export const isOnLastLine = (s: EditorState): boolean => !s.text.slice(s.cursor).includes('\n');

/** Moves the cursor one line up or down, keeping its column where the line allows. */
export const moveLine = (s: EditorState, direction: -1 | 1): EditorState => {
  const start = lineStart(s);
  const column = s.cursor - start;
  if (direction < 0) {
    if (start === 0) return s;
    const prevStart = s.text.lastIndexOf('\n', start - 2) + 1;
    return { ...s, cursor: Math.min(prevStart + column, start - 1) };
  }
  const endIndex = lineEnd(s);
  if (endIndex >= s.text.length) return s;
  const nextStart = endIndex + 1;
  const nextEnd = s.text.indexOf('\n', nextStart);
  return { ...s, cursor: Math.min(nextStart + column, nextEnd < 0 ? s.text.length : nextEnd) };
};

/** The word the cursor is in or after (for `@path` and `/command` completion). */
export const currentToken = (s: EditorState): { start: number; token: string } => {
  const before = s.text.slice(0, s.cursor);
  const start = Math.max(before.lastIndexOf(' '), before.lastIndexOf('\n')) + 1;
  return { start, token: before.slice(start) };
};

/** Replaces the current token with `replacement`. */
export const replaceToken = (s: EditorState, replacement: string): EditorState => {
  const { start } = currentToken(s);
  return {
    text: s.text.slice(0, start) + replacement + s.text.slice(s.cursor),
    cursor: start + replacement.length,
  };
};
