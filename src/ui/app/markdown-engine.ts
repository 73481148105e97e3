import { stripVTControlCharacters } from 'node:util';
import { Marked } from 'marked';
import { markedTerminal } from 'marked-terminal';

const instances = new Map<number, Marked>();

const instance = (width: number): Marked => {
  let marked = instances.get(width);
  if (!marked) {
    marked = new Marked(
      // marked-terminal's types lag behind marked's extension type.
      markedTerminal({ width, reflowText: true, tab: 2, showSectionPrefix: false }) as never,
    );
    instances.set(width, marked);
  }
  return marked;
};

/**
 * Markdown → terminal text (headings, lists, tables, highlighted code) by marked-terminal.
 * Partial input (a stream mid-way) renders too; without `color` every escape code is removed.
 */
export const renderMarkdown = (
  text: string,
  options: { width: number; color: boolean },
): string => {
  if (!text.trim()) return '';
  let out: string;
  try {
    out = instance(Math.max(20, options.width)).parse(text, { async: false });
  } catch {
    out = text; // a renderer failure must not hide the answer: show it raw
  }
  out = out.replace(/\n+$/, '');
  return options.color ? out : stripVTControlCharacters(out);
};
