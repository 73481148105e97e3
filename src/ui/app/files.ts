import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

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
      const real = realpathSync(file);
      if (!inside(realpathSync(root), real)) {
        problems.push(`@${relative} is outside the workspace; not attached`);
        continue;
      }
      const stat = statSync(real);
      if (!stat.isFile()) continue;
      if (stat.size > MAX_ATTACH_BYTES) {
        problems.push(
          `@${relative} is ${Math.round(stat.size / 1024)} KiB; attach files up to 256 KiB (the model can still read it with read_file)`,
        );
        continue;
      }
      blocks.push(`<file path="${relative}">\n${readFileSync(real, 'utf8')}\n</file>`);
      attachments.push(relative);
    } catch {
      // Not a file: an ordinary word that starts with @.
    }
  }
  return {
    prompt: blocks.length ? `${text}\n\n${blocks.join('\n\n')}` : text,
    attachments,
    problems,
  };
};
