import {
  LineCounter,
  isMap,
  isPair,
  isScalar,
  isSeq,
  parseDocument,
  type Document,
  type Node,
} from 'yaml';
import { readBoundedFileSync } from '../../workers/shared/bounded-read.ts';
import { ConfinedError } from '../../workers/shared/confine.ts';
import { NifflerError } from '../errors.ts';
import { tildify, type Env } from '../paths.ts';
import { keyLineId, yamlMemo, type KeyLines } from './yaml-memo.ts';

/** A config file larger than this is refused: real ones are a few KiB. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/** Where a configuration value came from. */
export type SourceKind =
  | 'default'
  | 'global'
  | 'repo'
  | 'mcp-json'
  | 'mcp-config-env'
  | 'env'
  | 'flag'
  /** Claude Code's settings: yours (`~/.claude/settings.json`), the repository's, its local ones. */
  | 'claude-user'
  | 'claude-project'
  | 'claude-local'
  /** Other assistants' MCP servers: Codex's, Gemini CLI's, opencode's; yours, the repository's. */
  | 'codex-user'
  | 'codex-project'
  | 'gemini-user'
  | 'gemini-project'
  | 'opencode-user'
  | 'opencode-project';

export interface ConfigSource {
  kind: SourceKind;
  /** The file, for file sources. */
  file?: string;
  /** The variable or flag, for `env` and `flag` sources: `NIFFLER_MODEL`, `--set a.b`. */
  label?: string;
}

/** One parsed configuration file, kept with its YAML document so any key path maps to a line. */
export interface ParsedFile {
  source: ConfigSource;
  data: Record<string, unknown>;
  /** 1-based line of a key path (or its nearest ancestor), for error messages and `--origin`. */
  lineOf: (path: readonly PropertyKey[]) => number | undefined;
}

export type KeyPath = readonly PropertyKey[];

/** `mcpServers.github.command`, with non-identifier keys quoted. */
export const formatPath = (path: KeyPath): string =>
  path
    .map((key, i) => {
      if (typeof key === 'number') return `[${key}]`;
      const text = String(key);
      const plain = /^[A-Za-z_$][\w$-]*$/.test(text) ? text : JSON.stringify(text);
      return i === 0 ? plain : `.${plain}`;
    })
    .join('')
    .replace(/\.\[/g, '[');

/** `~/.niffler/config.yaml:12 mcpServers.github.command` — the place an error points at. */
export const formatPlace = (
  file: string | undefined,
  line: number | undefined,
  path: KeyPath,
  env?: Env,
): string => {
  const where = file ? `${tildify(file, env)}${line ? `:${line}` : ''}` : '';
  const key = formatPath(path);
  return [where, key].filter(Boolean).join(' ');
};

export const describeValue = (value: unknown): string => {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? value.slice(0, 37) + '...' : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return typeof value;
};

const nodeAt = (doc: Document, path: KeyPath): { node: Node | undefined; keyNode?: Node } => {
  let node: unknown = doc.contents;
  let keyNode: Node | undefined;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(key),
      );
      if (!pair || !isPair(pair)) return { node: node, keyNode };
      keyNode = pair.key as Node;
      node = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof key === 'number') {
      const item = node.items[key];
      if (!item) return { node: node, keyNode };
      keyNode = undefined;
      node = item;
    } else {
      return { node: node as Node | undefined, keyNode };
    }
  }
  return { node: node as Node | undefined, keyNode };
};

/**
 * Reads and parses one YAML (or JSON) config file. Returns `undefined` when the file does not
 * exist; throws `config-invalid` with file:line for bad syntax, duplicate keys, an empty file or
 * a root that is not a mapping.
 */
export const readConfigFile = (
  file: string,
  source: ConfigSource,
  env?: Env,
): ParsedFile | undefined => {
  let text: string;
  try {
    // Bounded, regular files only: a config symlinked to /dev/zero or made a FIFO is an error
    // here, not a read that never ends.
    text = readBoundedFileSync(file, { maxBytes: MAX_CONFIG_BYTES, shown: tildify(file, env) });
  } catch (error) {
    if (error instanceof ConfinedError && error.code === 'not-found') return undefined;
    if (error instanceof ConfinedError)
      throw new NifflerError('config-invalid', error.message, { file }, { cause: error });
    throw new NifflerError(
      'config-invalid',
      `${tildify(file, env)}: cannot read the file (${(error as Error).message}); check its permissions`,
      { file },
      { cause: error },
    );
  }
  return parseConfigText(text, file, source, env);
};

/**
 * Parses config text; see `readConfigFile`. Text parsed before comes from the memo of its data
 * (yaml-memo.ts); its document is parsed only if a line of it is asked for.
 */
export const parseConfigText = (
  text: string,
  file: string,
  source: ConfigSource,
  env?: Env,
): ParsedFile => {
  const memo = yamlMemo(env);
  const kept = memo.get(text);
  if (kept) {
    let parsed: ParsedFile | undefined;
    const lineOf = (path: KeyPath) =>
      kept.lines[keyLineId(path)] ?? (parsed ??= parseYaml(text, file, source, env)).lineOf(path);
    return { source: { ...source, file }, data: kept.data, lineOf };
  }
  const parsed = parseYaml(text, file, source, env);
  memo.set(text, parsed.data, parsed.keyLines());
  return parsed;
};

/** How deep `keyLines` goes: `mcpServers.NAME.env.KEY`. */
const KEY_LINES_DEPTH = 4;
/** At most this many keys' lines are kept for a text. */
const KEY_LINES_MAX = 2000;

/** The lines of the keys (and sequence items) of `doc`, KEY_LINES_DEPTH levels down at most. */
const keyLinesOf = (doc: Document, lineOf: (path: KeyPath) => number | undefined): KeyLines => {
  const lines: KeyLines = {};
  let count = 0;
  const walk = (node: unknown, path: PropertyKey[]): void => {
    if (path.length >= KEY_LINES_DEPTH) return;
    const children: [PropertyKey, unknown][] = isMap(node)
      ? node.items.flatMap((pair) =>
          isPair(pair) && isScalar(pair.key) ? [[String(pair.key.value), pair.value]] : [],
        )
      : isSeq(node)
        ? node.items.map((item, i) => [i, item])
        : [];
    for (const [key, child] of children) {
      if (count++ >= KEY_LINES_MAX) return;
      const at = [...path, key];
      const line = lineOf(at);
      if (line !== undefined) lines[keyLineId(at)] = line;
      walk(child, at);
    }
  };
  walk(doc.contents, []);
  return lines;
};

const parseYaml = (
  text: string,
  file: string,
  source: ConfigSource,
  env?: Env,
): ParsedFile & { keyLines: () => KeyLines } => {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const shown = tildify(file, env);
  const first = doc.errors[0];
  if (first) {
    const line = first.linePos?.[0].line ?? lineCounter.linePos(first.pos[0]).line;
    const reason =
      first.code === 'DUPLICATE_KEY'
        ? 'duplicate key: each key may appear once in a mapping'
        : firstLine(first.message);
    throw new NifflerError(
      'config-invalid',
      `${shown}:${line}: ${reason}; fix the file and try again`,
      { file, line },
    );
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (data === null || data === undefined)
    throw new NifflerError(
      'config-invalid',
      `${shown}: the file is empty; write at least one key (see .niffler.example/config.yaml) or delete it`,
      { file },
    );
  if (typeof data !== 'object' || Array.isArray(data)) {
    const line = doc.contents ? lineCounter.linePos(doc.contents.range?.[0] ?? 0).line : 1;
    throw new NifflerError(
      'config-invalid',
      `${shown}:${line}: expected a mapping of keys at the top level, got ${describeValue(data)}`,
      { file, line },
    );
  }
  const lineOf = lineFinder(doc, lineCounter);
  return {
    source: { ...source, file },
    data: data as Record<string, unknown>,
    lineOf,
    keyLines: () => keyLinesOf(doc, lineOf),
  };
};

/** The 1-based line of a key path (or its nearest ancestor) in a parsed YAML document. */
export const lineFinder =
  (doc: Document, lineCounter: LineCounter, offset = 0) =>
  (path: KeyPath): number | undefined => {
    const { node, keyNode } = nodeAt(doc, path);
    const at = keyNode?.range?.[0] ?? node?.range?.[0];
    return at === undefined ? undefined : lineCounter.linePos(at).line + offset;
  };

const firstLine = (message: string): string =>
  message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message;
