import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { appendLinesSync } from '../../workers/shared/whole-write.ts';
import { nifflerPaths, type Env } from '../../main/paths.ts';

const LIMIT = 500;

/** `$NIFFLER_HOME/history/<workspace-key>.jsonl`: one JSON string per sent message. */
export const historyFile = (root: string, env: Env = process.env): string => {
  const paths = nifflerPaths(root, env);
  return path.join(paths.home, 'history', `${paths.key}.jsonl`);
};

/** The workspace's input history, oldest first (unreadable lines skipped). */
export const loadHistory = (file: string): string[] => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const items: string[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'string') items.push(value);
    } catch {
      // A torn line from a crash: skip it.
    }
  }
  return items.slice(-LIMIT);
};

/** Appends one entry (not repeating the last one); rewrites the file when it grows past the cap. */
export const appendHistory = (file: string, items: string[], entry: string): string[] => {
  if (!entry.trim() || items.at(-1) === entry) return items;
  const next = [...items, entry].slice(-LIMIT);
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    if (items.length >= LIMIT)
      writeFileSync(file, next.map((i) => JSON.stringify(i)).join('\n') + '\n', { mode: 0o600 });
    else appendLinesSync(file, JSON.stringify(entry) + '\n');
  } catch {
    // History is a convenience: a read-only home must not break the session.
  }
  return next;
};
