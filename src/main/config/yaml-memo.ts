import path from 'node:path';
import yamlPackage from 'yaml/package.json' with { type: 'json' };
import { readStateFile, writeStateFile } from '../../workers/shared/state-file.ts';
import { nifflerHome, type Env } from '../paths.ts';
import { VERSION } from '../version.ts';
import { plainJson } from './parse-memo.ts';

// The data of the config files' YAML as last parsed, per text. A cold start reads the same few
// files every time, and the yaml library's first parse in a process is most of reading them
// (20–60 ms on a small machine: its code runs for the first time), where taking the data kept
// for the same text costs a JSON.parse. Only a parse that succeeded with plain JSON data is kept
// (see plainJson); a text that fails is parsed every time, so its error is the parser's own. The
// documents are not kept: the lines of the keys a few levels down are (KeyLines), and a line wanted
// beyond them, for a message, comes from parsing the text then (source.ts). One private file, $NIFFLER_HOME/cache/yaml.json (0600, written whole; read only
// if ours and nobody else may write it), for this niffler and this yaml library: another version,
// a file cut short or not ours reads as empty.

/** Texts kept, at most, the most recently parsed last (a workspace has a few config files). */
const MAX_ENTRIES = 32;
const MAX_BYTES = 1024 * 1024;
/** Whose parses the file holds: what parsed them and how (source.ts's options), with key lines. */
const PARSER = `niffler ${VERSION} yaml ${yamlPackage.version} uniqueKeys maxAliasCount=100 lines`;

/**
 * The lines of a text's keys, by `keyLineId` of their paths: what a listing that shows where each
 * entry is defined (`mcp list`'s `file:line`) asks for, so that it needs no parse either.
 */
export type KeyLines = Record<string, number>;

/** A key path's id in `KeyLines`: map keys as strings, sequence indexes as numbers. */
export const keyLineId = (path: readonly PropertyKey[]): string =>
  JSON.stringify(path.map((key) => (typeof key === 'number' ? key : String(key))));

/** What the memo keeps of a text: its data, and the lines of its keys. */
interface Kept {
  data: Record<string, unknown>;
  lines: KeyLines;
}

class YamlMemo {
  #entries: Map<string, string> | undefined;

  constructor(private readonly file: string) {}

  /** The data last parsed from `text` (a new copy) and its keys' lines, or undefined. */
  get(text: string): Kept | undefined {
    const kept = this.#load().get(text);
    return kept === undefined ? undefined : (JSON.parse(kept) as Kept);
  }

  /** Keeps `data`, parsed from `text`, when it is plain JSON; writes the file when it changed. */
  set(text: string, data: Record<string, unknown>, lines: KeyLines): void {
    const plain = plainJson(data);
    if (plain === undefined) return;
    const json = `{"data":${plain},"lines":${JSON.stringify(lines)}}`;
    const entries = this.#load();
    if (entries.get(text) === json) return;
    entries.delete(text);
    entries.set(text, json);
    while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    const out = JSON.stringify({ parser: PARSER, entries: [...entries] });
    if (out.length > MAX_BYTES) return;
    try {
      writeStateFile(this.file, out);
    } catch {
      // A read-only or full home: the next start parses again.
    }
  }

  #load(): Map<string, string> {
    if (this.#entries) return this.#entries;
    this.#entries = new Map();
    const read = readStateFile(this.file, MAX_BYTES);
    if (read.kind !== 'text') return this.#entries;
    try {
      const kept = JSON.parse(read.text) as { parser?: unknown; entries?: unknown };
      if (kept.parser !== PARSER || !Array.isArray(kept.entries)) return this.#entries;
      for (const entry of kept.entries)
        if (Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string')
          this.#entries.set(entry[0], entry[1]);
    } catch {
      // Cut short, or not ours: an empty memo.
    }
    return this.#entries;
  }
}

const memos = new Map<string, YamlMemo>();

/** The memo of the niffler home `env` names (one per home in a process). */
export const yamlMemo = (env?: Env): YamlMemo => {
  const file = path.join(nifflerHome(env), 'cache', 'yaml.json');
  let memo = memos.get(file);
  if (!memo) memos.set(file, (memo = new YamlMemo(file)));
  return memo;
};
