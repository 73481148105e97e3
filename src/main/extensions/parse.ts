import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { describeValue, formatPath, lineFinder, type KeyPath } from '../config/source.ts';
import { PARSE_ONCE } from '../config/schema.ts';
import { schemaProblems } from '../config/validate.ts';

/** A YAML mapping read from an extension file, with the line of any key path. */
export interface YamlMapping {
  data: Record<string, unknown>;
  lineOf: (path: KeyPath) => number | undefined;
}

/** What parsing one file gave: the value, or why the file is skipped (`file:line: …`). */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const firstLine = (message: string): string =>
  message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message;

/**
 * Parses `text` as a YAML mapping (an empty text is an empty mapping); `offset` is added to line
 * numbers, for frontmatter that starts below a `---` line. Problems name `shown:line`.
 */
export const parseYamlMapping = (text: string, shown: string, offset = 0): Parsed<YamlMapping> => {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const error = doc.errors[0];
  if (error) {
    const line = (error.linePos?.[0].line ?? lineCounter.linePos(error.pos[0]).line) + offset;
    const why = error.code === 'DUPLICATE_KEY' ? 'duplicate key' : firstLine(error.message);
    return { ok: false, problem: `${shown}:${line}: ${why}` };
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 }) ?? {};
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return {
      ok: false,
      problem: `${shown}:${1 + offset}: expected a mapping of keys, got ${describeValue(data)}`,
    };
  const lineOf = lineFinder(doc, lineCounter, offset);
  return { ok: true, value: { data: data as Record<string, unknown>, lineOf } };
};

/** A Markdown file split into its YAML frontmatter (between `---` lines) and its body. */
interface MarkdownFile extends YamlMapping {
  body: string;
}

const FENCE = /^---[ \t]*\r?$/;

/**
 * Splits Markdown with optional frontmatter: a first line `---`, YAML, a line `---`, then the
 * body. Without a first `---` the whole file is the body.
 */
export const parseMarkdown = (text: string, shown: string): Parsed<MarkdownFile> => {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  if (!FENCE.test(lines[0] ?? ''))
    return { ok: true, value: { data: {}, lineOf: () => undefined, body: text.trim() } };
  const end = lines.findIndex((line, i) => i > 0 && FENCE.test(line));
  if (end < 0)
    return {
      ok: false,
      problem: `${shown}:1: the frontmatter opened with --- is never closed by a --- line`,
    };
  const yaml = parseYamlMapping(lines.slice(1, end).join('\n'), shown, 1);
  if (!yaml.ok) return yaml;
  return {
    ok: true,
    value: {
      ...yaml.value,
      body: lines
        .slice(end + 1)
        .join('\n')
        .trim(),
    },
  };
};

/** A value read from frontmatter (or another tool's file), and the keys it left unused. */
interface Checked<T> {
  value: T;
  /** `shown:line key: not used by niffler; ignored`, one per key the schema does not name. */
  notes: string[];
}

/**
 * Frontmatter as the tools that write it read it: keys `schema` does not name are left out and
 * noted (Claude Code, opencode and the skills standard ignore what they do not use, and so a file
 * written for them loads here too), the keys it names are checked strictly — a value that is
 * wrong for a field niffler uses skips the file, with `shown:line key: what is wrong`. `why`
 * says more than "not used" of a key (where niffler takes it from instead). The one helper
 * agents, commands and skills share.
 */
export const checkFrontmatter = <S extends z.ZodObject>(
  schema: S,
  mapping: YamlMapping,
  shown: string,
  why: Readonly<Record<string, string>> = {},
): Parsed<Checked<z.infer<S>>> => {
  const known = new Set(Object.keys(schema.shape));
  const notes: string[] = [];
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(mapping.data)) {
    if (known.has(key)) data[key] = value;
    else {
      const line = mapping.lineOf([key]);
      const reason = Object.hasOwn(why, key) ? why[key] : 'not used by niffler; ignored';
      notes.push(`${shown}${line ? `:${line}` : ''} ${key}: ${reason}`);
    }
  }
  const checked = checkSchema(schema, { data, lineOf: mapping.lineOf }, shown);
  return checked.ok ? { ok: true, value: { value: checked.value, notes } } : checked;
};

/**
 * `data` checked against `schema`: the parsed value, or the first problem as `shown:line key:
 * what is wrong` (the others follow on their own lines).
 */
export const checkSchema = <S extends z.ZodType>(
  schema: S,
  mapping: YamlMapping,
  shown: string,
): Parsed<z.infer<S>> => {
  const place = (path: KeyPath) => {
    const line = mapping.lineOf(path);
    return `${shown}${line ? `:${line}` : ''}${path.length ? ` ${formatPath(path)}` : ''}`;
  };
  const problems = schemaProblems(schema, mapping.data, place);
  if (problems.length) return { ok: false, problem: problems.join('\n') };
  return { ok: true, value: schema.parse(mapping.data, PARSE_ONCE) };
};
