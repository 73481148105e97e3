import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import type { ChatMessage, UserPart } from '../../workers/protocol/api.ts';
import { describeFsError, fsFailure } from '../../workers/shared/fs-errors.ts';
import { appendLinesSync } from '../../workers/shared/whole-write.ts';
import { readTranscript, titleOf } from './transcript.ts';

// The search index of a workspace's sessions: `search-index.tsv` beside the transcripts, a header
// line and then one record per session — id, last update, title, the lower-cased words of its
// prompts, answers and tool names, and that text's length (a torn or garbled record fails the
// check and is skipped; its session is read again from its transcript). When a turn ends, the
// session's record is appended again (the last record of an id wins). A search reads this one
// file, not thousands of transcripts; it indexes the transcripts the file does not know yet and
// writes the file anew when it is missing, not an index, holds bad records or mostly stale ones.
// The transcripts stay the truth: the index can always be deleted and is then rebuilt.

const INDEX_FILE = 'search-index.tsv';
const HEADER = '#niffler-search-index 2';
/** Characters of one session's text kept in the index: the first half as written, then its
 * other words once each, so every word of a long session can still be found. */
const MAX_TEXT = 64 * 1024;
/** Words longer than this (blobs, hashes) are not kept from past the first half. */
const MAX_WORD = 80;
/** Transcripts read between two turns of the event loop while indexing. */
const BATCH = 100;
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** One session found, newest first. */
interface SearchHit {
  id: string;
  title: string;
  updatedAt: string;
  /** Where the first word was found, with some text around it (lower-cased). */
  snippet: string;
}

interface SearchResult {
  hits: SearchHit[];
  /** Transcripts left out (unreadable) and index faults, each `file: what went wrong`. */
  problems: string[];
}

interface Entry {
  updatedAt: string;
  title: string;
  text: string;
}

const flat = (text: string): string => text.replace(/[\t\r\n]+/g, ' ').trim();

const textOf = (content: string | UserPart[]): string =>
  typeof content === 'string'
    ? content
    : content.map((p) => (p.type === 'text' ? p.text : '')).join(' ');

/** At most MAX_TEXT characters: the first half as is, then the remaining words once each. */
const capped = (text: string): string => {
  if (text.length <= MAX_TEXT) return text;
  const head = text.slice(0, MAX_TEXT / 2);
  const seen = new Set(head.split(' '));
  const rest: string[] = [];
  let size = head.length;
  for (const word of text.slice(MAX_TEXT / 2).split(' ')) {
    if (seen.has(word) || word.length > MAX_WORD) continue;
    seen.add(word);
    size += word.length + 1;
    if (size > MAX_TEXT) break;
    rest.push(word);
  }
  return `${head} ${rest.join(' ')}`;
};

/** A session's index entry, from its messages. */
export const indexEntry = (messages: readonly ChatMessage[], updatedAt: string): Entry => {
  const parts: string[] = [];
  for (const m of messages) {
    if (m.role === 'user') parts.push(textOf(m.content));
    else if (m.role === 'assistant') {
      parts.push(m.content);
      for (const call of m.toolCalls ?? []) parts.push(call.name);
    }
  }
  return {
    updatedAt,
    title: flat(titleOf([...messages])),
    text: capped(flat(parts.join(' ')).toLowerCase()),
  };
};

const record = (id: string, e: Entry): string =>
  `\n${id}\t${e.updatedAt}\t${e.title}\t${e.text}\t${e.text.length}`;

/**
 * Records (appends) a session's entry: called when one of its turns has ended. Without an index
 * file nothing is written: the next search builds it from the transcripts.
 */
export const updateIndex = (
  dir: string,
  id: string,
  messages: readonly ChatMessage[],
  now = new Date(),
): void => {
  const file = path.join(dir, INDEX_FILE);
  try {
    if (existsSync(file))
      appendLinesSync(file, record(id, indexEntry(messages, now.toISOString())));
  } catch {
    // The index is a cache: the session's record is older than its transcript until its next
    // turn ends or the index is rebuilt (delete the file).
  }
};

/** An index file as read: its entries, and how far into which file (appends are read on). */
interface ParsedIndex {
  entries: Map<string, Entry>;
  records: number;
  /** Records that failed the checks: torn, garbled, or not a session's. */
  bad: number;
  /** The file's inode and the bytes read: the file is only ever appended to or replaced. */
  ino: number;
  size: number;
}

/** One record's entry, or undefined when it fails a check. */
const parseRecord = (line: string): [string, Entry] | undefined => {
  const f = line.split('\t');
  if (f.length !== 5) return undefined;
  const [id, updatedAt, title, text, length] = f as [string, string, string, string, string];
  if (!SESSION_ID.test(id) || Number.isNaN(Date.parse(updatedAt))) return undefined;
  if (String(text.length) !== length) return undefined;
  return [id, { updatedAt, title, text }];
};

/**
 * Applies one record. A bad one is counted and its session read again from the transcript (a
 * torn record may be its newest) — unless it may still be being written (`complete` false):
 * then it is left to be read again next time, and false returned.
 */
const applyRecord = (index: ParsedIndex, line: string, complete: boolean): boolean => {
  if (!line) return true;
  const parsed = parseRecord(line);
  if (parsed) index.entries.set(parsed[0], parsed[1]);
  else if (!complete) return false;
  else {
    index.bad++;
    const id = line.slice(0, line.indexOf('\t'));
    if (SESSION_ID.test(id)) index.entries.delete(id);
  }
  index.records++;
  return true;
};

/** Applies the records of `buf` from `start` (each after a newline); `base` is buf's offset. */
const applyRecords = (index: ParsedIndex, buf: Buffer, start: number, base: number): void => {
  const last = buf.lastIndexOf(10);
  if (last < start) {
    index.size = base + start;
    return;
  }
  for (const line of buf.toString('utf8', start + 1, last).split('\n'))
    applyRecord(index, line, true);
  const complete = applyRecord(index, buf.toString('utf8', last + 1), false);
  index.size = base + (complete ? buf.length : last);
};

/** Indexes and listings kept between searches (the daemon's), dropped after a while unused. */
const held = new Map<string, { index?: ParsedIndex; listing?: Listing; timer: NodeJS.Timeout }>();
const HOLD_MS = 10 * 60_000;

const hold = (dir: string, what: { index?: ParsedIndex; listing?: Listing }): void => {
  const old = held.get(dir);
  if (old) clearTimeout(old.timer);
  const timer = setTimeout(() => held.delete(dir), HOLD_MS);
  timer.unref();
  held.set(dir, { ...old, ...what, timer });
};

/** Lets go of the index and listing held for `dir` (a closing engine; a bench's cold search). */
export const releaseIndex = (dir: string): void => {
  const old = held.get(dir);
  if (old) clearTimeout(old.timer);
  held.delete(dir);
};

const readAll = (fd: number, size: number, from: number): Buffer => {
  const buf = Buffer.alloc(size);
  for (let got = 0; got < size;) {
    const n = readSync(fd, buf, got, size - got, from + got);
    if (n === 0) return buf.subarray(0, got);
    got += n;
  }
  return buf;
};

/**
 * The index of `dir` as on disk, the records appended since the last read added; undefined when
 * missing or not an index (a fault said in `problems`).
 */
const readIndex = (dir: string, problems: string[]): ParsedIndex | undefined => {
  const file = path.join(dir, INDEX_FILE);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      problems.push(
        `${fsFailure('read the search index', file, error)}; rebuilt from the transcripts`,
      );
    hold(dir, { index: undefined });
    return undefined;
  }
  try {
    const { ino, size } = fstatSync(fd);
    let index = held.get(dir)?.index;
    if (index && (index.ino !== ino || size < index.size)) index = undefined;
    const from = index?.size ?? 0;
    const buf = readAll(fd, size - from, from);
    if (index) applyRecords(index, buf, 0, from);
    else {
      const header = buf.toString('utf8', 0, HEADER.length + 1);
      if (header !== HEADER && header !== `${HEADER}\n`) {
        hold(dir, { index: undefined });
        return undefined;
      }
      index = { entries: new Map(), records: 0, bad: 0, ino, size: 0 };
      applyRecords(index, buf, HEADER.length, 0);
    }
    hold(dir, { index });
    return index;
  } catch (error) {
    problems.push(
      `${fsFailure('read the search index', file, error)}; rebuilt from the transcripts`,
    );
    return undefined;
  } finally {
    closeSync(fd);
  }
};

/** Reads the transcripts of `ids` (yielding now and then), as index entries. */
const indexTranscripts = async (
  dir: string,
  ids: readonly string[],
  problems: string[],
): Promise<Map<string, Entry>> => {
  const found = new Map<string, Entry>();
  for (const [n, id] of ids.entries()) {
    if (n > 0 && n % BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
    const file = path.join(dir, `${id}.jsonl`);
    try {
      const { messages, entries } = readTranscript(dir, id);
      const last = entries.findLast((e) => 'time' in e || 'createdAt' in e);
      const time =
        last && ('time' in last ? last.time : (last as { createdAt?: string }).createdAt);
      const updatedAt =
        time && !Number.isNaN(Date.parse(time)) ? time : statSync(file).mtime.toISOString();
      found.set(id, indexEntry(messages, updatedAt));
    } catch (error) {
      problems.push(`${file}: ${describeFsError(error)}; left out of the search`);
    }
  }
  return found;
};

/** Writes the index anew (atomically: a reader sees the old file or the new one) and holds it. */
const writeIndex = (dir: string, entries: Map<string, Entry>): void => {
  const file = path.join(dir, INDEX_FILE);
  const temp = `${file}.${process.pid}.tmp`;
  const data = Buffer.from(`${HEADER}${[...entries].map(([id, e]) => record(id, e)).join('')}`);
  try {
    writeFileSync(temp, data, { mode: 0o600 });
    const { ino } = statSync(temp);
    renameSync(temp, file);
    hold(dir, { index: { entries, records: entries.size, bad: 0, ino, size: data.length } });
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
};

/** A directory's transcripts as last listed, and the directory's mtime then. */
interface Listing {
  mtimeMs: number;
  at: number;
  ids: string[];
}

/**
 * The session ids of `dir`'s transcripts (listed again only when the directory changed, or may
 * have within a clock tick of the last listing); empty, with a problem unless missing, when the
 * directory cannot be read.
 */
const transcriptIds = (dir: string, problems: string[]): string[] => {
  try {
    const { mtimeMs } = statSync(dir);
    const listing = held.get(dir)?.listing;
    if (listing && listing.mtimeMs === mtimeMs && mtimeMs < listing.at - 2000) return listing.ids;
    const at = Date.now();
    const ids = readdirSync(dir)
      .filter((n) => n.endsWith('.jsonl'))
      .map((n) => n.slice(0, -'.jsonl'.length))
      .filter((id) => SESSION_ID.test(id));
    hold(dir, { listing: { mtimeMs, at, ids } });
    return ids;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      problems.push(fsFailure('list the sessions in', dir, error));
    return [];
  }
};

/**
 * The index of `dir`, brought up to date with the transcripts there: sessions it lacks are read
 * from their transcripts and appended, removed ones dropped. Written anew when missing, not an
 * index, holding bad records, or mostly records a later one replaced. The file is read again
 * and written without a pause, so a turn that ends meanwhile in this process is not lost.
 */
const loadIndex = async (dir: string, problems: string[] = []): Promise<Map<string, Entry>> => {
  const ids = transcriptIds(dir, problems);
  const first = readIndex(dir, problems);
  const missing = ids.filter((id) => !first?.entries.has(id));
  const found = missing.length
    ? await indexTranscripts(dir, missing, problems)
    : new Map<string, Entry>();
  const read = missing.length ? readIndex(dir, []) : first;
  const entries = read?.entries ?? new Map<string, Entry>();
  const present = new Set(ids);
  let rewrite = !read || read.bad > 0 || read.records > 2 * entries.size + 16;
  for (const id of [...entries.keys()])
    if (!present.has(id)) rewrite = entries.delete(id) || rewrite;
  const added = new Map([...found].filter(([id]) => !entries.has(id)));
  for (const [id, entry] of added) entries.set(id, entry);
  if ((!rewrite && added.size === 0) || (ids.length === 0 && !read)) return entries;
  try {
    if (rewrite) writeIndex(dir, entries);
    else
      appendLinesSync(
        path.join(dir, INDEX_FILE),
        [...added].map(([id, e]) => record(id, e)).join(''),
      );
  } catch (error) {
    const file = path.join(dir, INDEX_FILE);
    problems.push(
      `${fsFailure('write the search index', file, error)}; searches read the transcripts until it can be written`,
    );
  }
  return entries;
};

/** `…text around the first word…`, or the title when the word is only there. */
const snippetOf = (entry: Entry, word: string): string => {
  const at = entry.text.indexOf(word);
  if (at < 0) return entry.title;
  const from = Math.max(0, at - 40);
  const to = at + word.length + 60;
  return `${from > 0 ? '…' : ''}${entry.text.slice(from, to)}${to < entry.text.length ? '…' : ''}`;
};

/**
 * Sessions of `dir` whose titles, prompts, answers or tool names hold every word of `query`
 * (case-insensitive), newest first, at most `limit`; with what could not be searched.
 */
export const searchSessions = async (
  dir: string,
  query: string,
  limit = 20,
): Promise<SearchResult> => {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const problems: string[] = [];
  const entries = await loadIndex(dir, problems);
  const hits: SearchHit[] = [];
  if (words.length === 0) return { hits, problems };
  for (const [id, entry] of entries) {
    const { text } = entry;
    if (!words.every((w) => text.includes(w) || entry.title.toLowerCase().includes(w))) continue;
    hits.push({
      id,
      title: entry.title,
      updatedAt: entry.updatedAt,
      snippet: snippetOf(entry, words[0]!),
    });
  }
  hits.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id));
  return { hits: hits.slice(0, limit), problems };
};
