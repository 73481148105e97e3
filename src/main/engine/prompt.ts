import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readSync,
  realpathSync,
} from 'node:fs';
import path from 'node:path';

/** The repository's prompt files, in the order they join the system prompt, with their headings. */
const PROMPT_FILES = [
  ['.niffler/prompts/REPO.md', 'About this repository'],
  ['.niffler/prompts/PROJECT.md', 'Current project'],
  ['AGENTS.md', 'AGENTS.md'],
  ['NIFFLER.md', 'NIFFLER.md'],
  ['CLAUDE.md', 'CLAUDE.md'],
] as const;

/** Bytes of one prompt file given to the model; the rest is cut with a note. */
export const MAX_PROMPT_FILE_BYTES = 64 * 1024;

/** The prompt files `root` has (names only; nothing is read). */
export const promptFilesPresent = (root: string): string[] =>
  PROMPT_FILES.map(([file]) => file).filter((file) => existsSync(path.join(root, file)));

type Read = { text: string; cut: boolean } | { refused: string } | undefined;

const isInside = (child: string, parent: string): boolean =>
  child === parent || child.startsWith(parent + path.sep);

/**
 * Reads a prompt file as a file tool would: opened without blocking (a FIFO cannot hang it), a
 * regular file whose real path — read back from the open descriptor, so a swapped symlink cannot
 * slip past — is inside the workspace, at most `MAX_PROMPT_FILE_BYTES`.
 */
const readConfined = (root: string, file: string): Read => {
  let fd: number;
  try {
    fd = openSync(path.join(root, file), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? undefined
      : { refused: `cannot be read (${code})` };
  }
  try {
    if (!fstatSync(fd).isFile()) return { refused: 'is not a regular file' };
    const real = realpathSync(
      process.platform === 'linux' ? `/proc/self/fd/${fd}` : path.join(root, file),
    );
    if (!isInside(real, realpathSync(root)))
      return { refused: `leads outside the workspace (${real})` };
    const buffer = Buffer.alloc(MAX_PROMPT_FILE_BYTES + 1);
    let size = 0;
    for (let n = 1; n > 0 && size < buffer.length; size += n)
      n = readSync(fd, buffer, size, buffer.length - size, null);
    const cut = size > MAX_PROMPT_FILE_BYTES;
    return {
      text: buffer.subarray(0, Math.min(size, MAX_PROMPT_FILE_BYTES)).toString('utf8'),
      cut,
    };
  } finally {
    closeSync(fd);
  }
};

/** What went into the system prompt from the repository, and what was left out and why. */
export interface SystemPrompt {
  text: string;
  /** Prompt files left out because the repository is not trusted. */
  untrusted: string[];
  /** Prompt files refused: outside the workspace, not a regular file, unreadable. */
  refused: { file: string; why: string }[];
}

const baseInstructions = (root: string, hasTools: boolean, now: Date): string =>
  [
    'You are niffler, an AI assistant working in a terminal inside a software repository.',
    `Workspace root: ${root}. Platform: ${process.platform}. Today: ${now.toISOString().slice(0, 10)}.`,
    'Answer concisely. Prefer doing over describing: use the tools to look at files before you talk about them, and to make the changes you propose.',
    ...(hasTools
      ? [
          'Tool guidance: paths are relative to the workspace root. Read a file before you edit it; edit_file needs the exact current text. ' +
            'Use glob and grep to find things rather than guessing. A tool result that says it failed is information: read it, correct the call, and go on. ' +
            "Some calls need the user's approval; a denied call means: do not try it again, find another way or say what you need.",
        ]
      : []),
  ].join('\n');

/** Characters of MCP server instructions given to the model: per server, and in all. */
export const MAX_INSTRUCTIONS = { perServer: 4_000, total: 12_000 };

/**
 * The `instructions` of MCP servers (from `initialize` or `server/discover`), each under its
 * server's name, each cut at `MAX_INSTRUCTIONS.perServer` and all at `.total`.
 */
const instructionsSection = (list: { server: string; text: string }[]): string | undefined => {
  let left = MAX_INSTRUCTIONS.total;
  const parts: string[] = [];
  for (const { server, text } of list) {
    const limit = Math.min(MAX_INSTRUCTIONS.perServer, left);
    if (limit <= 0) break;
    const trimmed = text.trim();
    const cut = trimmed.length > limit;
    parts.push(`### ${server}\n\n${cut ? `${trimmed.slice(0, limit)}\n\n[cut here]` : trimmed}`);
    left -= Math.min(trimmed.length, limit);
  }
  if (parts.length === 0) return undefined;
  const intro =
    'How to use the tools of these MCP servers, in their own words (server__tool names are theirs):';
  return `## Instructions from MCP servers\n\n${intro}\n\n${parts.join('\n\n')}`;
};

/**
 * The system prompt of a turn: what niffler is and how to work, the instructions of the MCP
 * servers it may use, then — only when the repository is trusted — its prompt files (`.niffler/prompts/REPO.md`, `PROJECT.md`, `AGENTS.md`,
 * `NIFFLER.md`, `CLAUDE.md`), each under a heading, each read confined and bounded.
 */
export const buildSystemPrompt = (
  root: string,
  options: {
    hasTools: boolean;
    trusted: boolean;
    now?: Date;
    instructions?: { server: string; text: string }[];
  },
): SystemPrompt => {
  const servers = instructionsSection(options.instructions ?? []);
  const parts = [
    baseInstructions(root, options.hasTools, options.now ?? new Date()),
    ...(servers ? [servers] : []),
  ];
  if (!options.trusted)
    return { text: parts.join('\n\n'), untrusted: promptFilesPresent(root), refused: [] };
  const refused: SystemPrompt['refused'] = [];
  for (const [file, title] of PROMPT_FILES) {
    const read = readConfined(root, file);
    if (!read) continue;
    if ('refused' in read) {
      refused.push({ file, why: read.refused });
      continue;
    }
    // HTML comments in the templates are notes for the human who edits them.
    const text = read.text.replace(/<!--[\s\S]*?-->/g, '').trim();
    const note = read.cut
      ? `\n\n[${file} is cut here: only its first ${MAX_PROMPT_FILE_BYTES} bytes are given]`
      : '';
    if (text) parts.push(`## ${title}\n\n${text}${note}`);
  }
  return { text: parts.join('\n\n'), untrusted: [], refused };
};
