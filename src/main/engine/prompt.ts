import { readFileSync } from 'node:fs';
import path from 'node:path';

const PROMPT_FILES = [
  ['.niffler/prompts/REPO.md', 'About this repository'],
  ['.niffler/prompts/PROJECT.md', 'Current project'],
  ['AGENTS.md', 'AGENTS.md'],
  ['NIFFLER.md', 'NIFFLER.md'],
] as const;

const read = (file: string): string | undefined => {
  try {
    // HTML comments in the templates are notes for the human who edits them.
    const text = readFileSync(file, 'utf8')
      .replace(/<!--[\s\S]*?-->/g, '')
      .trim();
    return text || undefined;
  } catch {
    return undefined;
  }
};

/**
 * The system prompt of a turn: what niffler is and how to work, then the repository's own prompt
 * files (`.niffler/prompts/REPO.md`, `PROJECT.md`, `AGENTS.md`, `NIFFLER.md`), each under a heading.
 */
export const buildSystemPrompt = (
  root: string,
  options: { hasTools: boolean; now?: Date } = { hasTools: true },
): string => {
  const now = options.now ?? new Date();
  const parts = [
    [
      'You are niffler, an AI assistant working in a terminal inside a software repository.',
      `Workspace root: ${root}. Platform: ${process.platform}. Today: ${now.toISOString().slice(0, 10)}.`,
      'Answer concisely. Prefer doing over describing: use the tools to look at files before you talk about them, and to make the changes you propose.',
      ...(options.hasTools
        ? [
            'Tool guidance: paths are relative to the workspace root. Read a file before you edit it; edit_file needs the exact current text. ' +
              'Use glob and grep to find things rather than guessing. A tool result that says it failed is information: read it, correct the call, and go on. ' +
              "Some calls need the user's approval; a denied call means: do not try it again, find another way or say what you need.",
          ]
        : []),
    ].join('\n'),
  ];
  for (const [file, title] of PROMPT_FILES) {
    const text = read(path.join(root, file));
    if (text) parts.push(`## ${title}\n\n${text}`);
  }
  return parts.join('\n\n');
};
