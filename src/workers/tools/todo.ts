import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { writeAtomic } from '../shared/atomic.ts';
import { readBoundedFile } from '../shared/bounded-read.ts';
import { done, fail } from './result.ts';

const STATUSES = ['pending', 'in_progress', 'done', 'cancelled'] as const;
interface Item {
  id: number;
  text: string;
  status: (typeof STATUSES)[number];
}

/** A stored list as written by `save`: an array of items, each with exactly their three types. */
const isList = (value: unknown): value is Item[] =>
  Array.isArray(value) &&
  value.every((item: unknown) => {
    if (typeof item !== 'object' || item === null) return false;
    const { id, text, status } = item as Record<string, unknown>;
    return (
      Number.isInteger(id) &&
      typeof text === 'string' &&
      (STATUSES as readonly unknown[]).includes(status)
    );
  });

const MARKS: Record<Item['status'], string> = {
  pending: '[ ]',
  in_progress: '[>]',
  done: '[x]',
  cancelled: '[-]',
};

/** A todo list larger than this is not read: a real one is a few KiB. */
const MAX_BYTES = 1024 * 1024;

const load = async (file: string): Promise<Item[]> => {
  const text = await readBoundedFile(file, { maxBytes: MAX_BYTES }).catch(() => '[]');
  try {
    const parsed: unknown = JSON.parse(text);
    return isList(parsed)
      ? parsed.map(({ id, text: itemText, status }) => ({ id, text: itemText, status }))
      : [];
  } catch {
    // A torn or hand-edited file starts a fresh list rather than failing every call.
    return [];
  }
};

const render = (items: Item[]): string =>
  items.length === 0
    ? 'The todo list is empty.'
    : items.map((item) => `${MARKS[item.status]} ${item.id}. ${item.text}`).join('\n');

/** `todo`: the session's todo list, kept in `context.todoFile`; every action returns the list. */
export const todo = async (args: ToolArgs<'todo'>, context: ToolContext): Promise<ToolResult> => {
  const items = await load(context.todoFile);
  switch (args.action) {
    case 'list':
      return done(render(items), { structured: items });
    case 'add': {
      if (!args.items?.length) return fail('invalid-args', 'add needs items: ["text", …]');
      let next = Math.max(0, ...items.map((item) => item.id)) + 1;
      for (const text of args.items) items.push({ id: next++, text, status: 'pending' });
      break;
    }
    case 'update': {
      const item = items.find((candidate) => candidate.id === args.id);
      if (!item)
        return fail(
          'not-found',
          `no todo item has id ${args.id ?? '(missing)'}; ids: ${items.map((i) => i.id).join(', ') || 'none'}`,
        );
      if (!args.status && !args.text) return fail('invalid-args', 'update needs status or text');
      if (args.status) item.status = args.status;
      if (args.text) item.text = args.text;
      break;
    }
  }
  await mkdir(path.dirname(context.todoFile), { recursive: true, mode: 0o700 });
  await writeAtomic(context.todoFile, JSON.stringify(items, null, 2), 0o600);
  return done(render(items), { structured: items });
};
