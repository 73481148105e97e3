import { controlToken, THINK_BLOCKS } from './controls.ts';
import type { Family, OpenerMatch, Position, ReadContext } from './types.ts';

// The table the driver looks openers up in: every family's openers, thinking blocks, control
// tokens and fences, indexed by their first character, in the order they are tried.

type Handler =
  /** One opener and the families that share it, in their order (`<tool_call>` has four). */
  | { kind: 'family'; families: Family[]; match: OpenerMatch; at: Position }
  | { kind: 'think'; match: OpenerMatch; close: readonly string[] }
  | { kind: 'control'; match: OpenerMatch }
  | { kind: 'fence'; match: OpenerMatch };

/** A literal opener: its length when it is there, 0 when the text ends inside it, else -1. */
const literal =
  (opener: string): OpenerMatch =>
  (text, i) => {
    const n = Math.min(opener.length, text.length - i);
    for (let k = 0; k < n; k++) if (text.charCodeAt(i + k) !== opener.charCodeAt(k)) return -1;
    return n === opener.length ? n : 0;
  };

/** A fence line at the start of a line, through its newline (a code block, not a call). */
const fence = literal('```');
const fenceLine: OpenerMatch = (text, i, context) => {
  const head = fence(text, i, context);
  if (head <= 0) return head;
  const newline = text.indexOf('\n', i + 3);
  if (newline >= 0) return newline + 1 - i;
  return text.length - i > 200 ? 3 : 0;
};

export interface HandlerTable {
  /** Handlers by the first character of their opener. */
  byFirst: Map<string, Handler[]>;
  /** `first[c]` is 1 when some opener starts with character code `c` (< 128). */
  first: Uint8Array;
}

const tables = new Map<string, HandlerTable>();

/**
 * The table for `families`; `thinking` adds the thinking blocks (not in a reasoning channel).
 * Made once per list of families: every stream of a model reads with the same one.
 */
export const handlerTable = (families: readonly Family[], thinking: boolean): HandlerTable => {
  const key = `${thinking ? 't' : ''}${families.map((f) => f.id).join(',')}`;
  let table = tables.get(key);
  if (!table) {
    table = buildTable(families, thinking);
    tables.set(key, table);
  }
  return table;
};

const buildTable = (families: readonly Family[], thinking: boolean): HandlerTable => {
  const handlers: [string, Handler][] = [];
  const shared = new Map<string, Extract<Handler, { kind: 'family' }>>();
  for (const family of families)
    for (const opener of family.openers) {
      const text = opener.text;
      const at = opener.at ?? 'anywhere';
      const same = typeof text === 'string' ? shared.get(`${at} ${text}`) : undefined;
      if (same) {
        same.families.push(family);
        continue;
      }
      const first = typeof text === 'string' ? text[0]! : opener.first!;
      const match = typeof text === 'string' ? literal(text) : text;
      const handler: Handler = { kind: 'family', families: [family], match, at };
      if (typeof text === 'string') shared.set(`${at} ${text}`, handler);
      handlers.push([first, handler]);
    }
  if (thinking)
    for (const block of THINK_BLOCKS)
      handlers.push([
        block.open[0]!,
        { kind: 'think', match: literal(block.open), close: block.close },
      ]);
  handlers.push(['<', { kind: 'control', match: controlToken }]);
  handlers.push(['`', { kind: 'fence', match: fenceLine }]);
  const byFirst = new Map<string, Handler[]>();
  const first = new Uint8Array(128);
  for (const [c, handler] of handlers) {
    const list = byFirst.get(c);
    if (list) list.push(handler);
    else byFirst.set(c, [handler]);
    first[c.charCodeAt(0)] = 1;
  }
  return { byFirst, first };
};

/** Where the text being read stands: at a line's start, at the message's start. */
export interface OpenerPosition {
  lineStart: boolean;
  messageStart: boolean;
}

/**
 * What is at a place of the text: the families whose opener it is (tried first), another kind's
 * opener, or `partial` when the text ends inside one.
 */
export type Found =
  | 'partial'
  | { handler: Handler; length: number }
  | { families: { family: Family; length: number }[] };

/**
 * The handlers of `table` whose opener is at `at.i` of `at.buf`; once a family is locked (its
 * calls went out), only its openers count; `noFamilies` (a region given back) counts none.
 */
export const openersAt = (
  table: HandlerTable,
  context: ReadContext,
  lock: Family | undefined,
  at: {
    buf: string;
    i: number;
    final: boolean;
    position: OpenerPosition;
    noFamilies: boolean;
  },
): Found | undefined => {
  const { buf, i, final, position, noFamilies } = at;
  const families: { family: Family; length: number }[] = [];
  let partial = false;
  let other: { handler: Handler; length: number } | undefined;
  for (const handler of table.byFirst.get(buf[i]!) ?? []) {
    if (handler.kind === 'family') {
      if (noFamilies || (lock && !handler.families.includes(lock))) continue;
      if (handler.at === 'line' && !position.lineStart) continue;
    }
    if (handler.kind === 'think' && !position.messageStart) continue;
    if (handler.kind === 'fence' && !position.lineStart) continue;
    const length = handler.match(buf, i, context);
    if (length === 0 && !final) partial = true;
    if (length <= 0) continue;
    if (handler.kind !== 'family') other ??= { handler, length };
    else
      for (const family of handler.families)
        if (!lock || family === lock) families.push({ family, length });
  }
  if (partial) return 'partial';
  if (families.length > 0) return { families };
  return other;
};
