// The driver's two blocks that hold no calls, read up to their end: a code block (up to the fence
// that closes it) and a thinking block (up to its closing tag). What a block's end may still be
// at the end of the text is held back.

/** What reading a block gave: the text that goes out, what is left to read, and whether it ended. */
interface BlockScan {
  text: string;
  rest: string;
  closed: boolean;
}

/** Inside a code block: text up to the fence that closes it; `lineStart` as it stands after. */
export const scanFence = (
  buf: string,
  lineStart: boolean,
  final: boolean,
): BlockScan & { lineStart: boolean } => {
  let atLine = lineStart;
  for (let i = 0; i < buf.length; i++) {
    if (atLine && buf[i] === '`') {
      const head = buf.slice(i, i + 3);
      if (head === '```')
        return {
          text: buf.slice(0, i + 3),
          rest: buf.slice(i + 3),
          closed: true,
          lineStart: false,
        };
      if (!final && i + head.length === buf.length && '```'.startsWith(head))
        return { text: buf.slice(0, i), rest: buf.slice(i), closed: false, lineStart: true };
    }
    const c = buf[i]!;
    if (c === '\n') atLine = true;
    else if (c !== ' ' && c !== '\t') atLine = false;
  }
  return { text: buf, rest: '', closed: false, lineStart: atLine };
};

/** Reasoning up to the first of `closers`; a closer the text ends inside of is held back. */
export const scanReasoning = (
  buf: string,
  closers: readonly string[],
  final: boolean,
): BlockScan => {
  let at = -1;
  let closer = '';
  for (const c of closers) {
    const j = buf.indexOf(c);
    if (j >= 0 && (at < 0 || j < at)) [at, closer] = [j, c];
  }
  if (at >= 0) return { text: buf.slice(0, at), rest: buf.slice(at + closer.length), closed: true };
  let keep = 0;
  if (!final)
    for (const c of closers)
      for (let k = Math.min(c.length - 1, buf.length); k > keep; k--)
        if (c.startsWith(buf.slice(buf.length - k))) keep = k;
  return {
    text: buf.slice(0, buf.length - keep),
    rest: buf.slice(buf.length - keep),
    closed: false,
  };
};
