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
// documents are not kept: a line wanted for a message comes from parsing the text then
// (source.ts). One private file, $NIFFLER_HOME/cache/yaml.json (0600, written whole; read only
// if ours and nobody else may write it), for this niffler and this yaml library: another version,
// a file cut short or not ours reads as empty.

/** Texts kept, at most, the most recently parsed last (a workspace has a few config files). */
const MAX_ENTRIES = 32;
const MAX_BYTES = 1024 * 1024;
/** Whose parses the file holds: what parsed them and how (source.ts's options). */
const PARSER = `niffler ${VERSION} yaml ${yamlPackage.version} uniqueKeys maxAliasCount=100`;

class YamlMemo {
  #entries: Map<string, string> | undefined;

  constructor(private readonly file: string) {}

  /** The data last parsed from `text` (a new copy), or undefined. */
  get(text: string): Record<string, unknown> | undefined {
    const data = this.#load().get(text);
    return data === undefined ? undefined : (JSON.parse(data) as Record<string, unknown>);
  }

  /** Keeps `data`, parsed from `text`, when it is plain JSON; writes the file when it changed. */
  set(text: string, data: Record<string, unknown>): void {
    const json = plainJson(data);
    if (json === undefined) return;
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
