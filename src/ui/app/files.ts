import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readBoundedFileSync } from '../../workers/shared/bounded-read.ts';
import { ConfinedError } from '../../workers/shared/confine.ts';

const MAX_ATTACH_BYTES = 256 * 1024;

const inside = (root: string, file: string): boolean => {
  const relative = path.relative(root, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/** Files and directories under `root` that complete an `@path` token (directories end in `/`). */
export const completePath = (root: string, token: string, limit = 8): string[] => {
  const typed = token.replace(/^@/, '');
  const dir = typed.endsWith('/')
    ? typed
    : path.dirname(typed) === '.'
      ? ''
      : `${path.dirname(typed)}/`;
  const prefix = typed.slice(dir.length);
  const absolute = path.resolve(root, dir || '.');
  if (!inside(root, absolute)) return [];
  let names: { name: string; isDir: boolean }[];
  try {
    names = readdirSync(absolute, { withFileTypes: true }).map((d) => ({
      name: d.name,
      isDir: d.isDirectory(),
    }));
  } catch {
    return [];
  }
  return names
    .filter(
      (d) =>
        d.name.startsWith(prefix) &&
        d.name !== '.git' &&
        (prefix.startsWith('.') || !d.name.startsWith('.')),
    )
    .sort((a, b) => Number(b.isDir) - Number(a.isDir) || a.name.localeCompare(b.name))
    .slice(0, limit)
    .map((d) => `@${dir}${d.name}${d.isDir ? '/' : ''}`);
};

/** What to tell the user about an `@path` not attached; null for an ordinary `@word`. */
const attachProblem = (error: unknown, relative: string): string | null => {
  if (!(error instanceof ConfinedError)) return null;
  if (error.code === 'outside' || error.code === 'kernel-file')
    return `@${relative} is outside the workspace; not attached`;
  if (error.code === 'too-large')
    return `@${relative} is over 256 KiB; attach files up to 256 KiB (the model can still read it with read_file)`;
  return null;
};

/**
 * Finds `@path` tokens naming files inside `root` and appends their contents to the prompt.
 * Returns the text for the model and the attached paths (unknown `@words` stay as they are).
 */
export const attachFiles = (
  root: string,
  text: string,
): { prompt: string; attachments: string[]; problems: string[] } => {
  const attachments: string[] = [];
  const problems: string[] = [];
  const blocks: string[] = [];
  for (const match of text.matchAll(/(?:^|\s)@([^\s]+)/g)) {
    const relative = match[1]!;
    const file = path.resolve(root, relative);
    if (attachments.includes(relative)) continue;
    try {
      // Opened by descriptor and checked there: a symlink swapped meanwhile cannot attach a file
      // from outside, nor a FIFO or /dev/zero hang the prompt.
      const content = readBoundedFileSync(file, {
        maxBytes: MAX_ATTACH_BYTES,
        allowedRoots: [root],
        shown: `@${relative}`,
      });
      blocks.push(`<file path="${relative}">\n${content}\n</file>`);
      attachments.push(relative);
    } catch (error) {
      const problem = attachProblem(error, relative);
      if (problem) problems.push(problem);
    }
  }
  return {
    prompt: blocks.length ? `${text}\n\n${blocks.join('\n\n')}` : text,
    attachments,
    problems,
  };
};
