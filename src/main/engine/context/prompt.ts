import { existsSync } from 'node:fs';
import path from 'node:path';
import { gitContext } from './git.ts';
import { gatherInstructions, repositoryInstructionFiles } from './instructions.ts';

/** Characters of one MCP server's `instructions` given to the model. */
export const MAX_SERVER_INSTRUCTIONS = 2000;

/** The repository's instruction files at its root (names only; nothing is read). */
export const promptFilesPresent = (root: string): string[] =>
  repositoryInstructionFiles(root)
    .filter((file) => existsSync(file))
    .map((file) => path.relative(root, file));

/** What went into the system prompt, what was left out and why, and what each part weighs. */
export interface SystemPrompt {
  text: string;
  /** Repository instruction files left out because the repository is not trusted. */
  untrusted: string[];
  /** Files refused: outside the workspace, not a regular file, unreadable, an import loop. */
  refused: { file: string; why: string }[];
  /** Files cut to the instructions budget. */
  cut: string[];
  /** Characters of the instructions (files and server instructions) within `text`. */
  instructionChars: number;
}

export interface PromptOptions {
  root: string;
  /** Where the front-end was started: instruction files from the root down to it are read. */
  cwd?: string;
  /** `$NIFFLER_HOME`, for the user's own instruction files. */
  home: string;
  hasTools: boolean;
  /** The repository is trusted: its instruction files may be given. */
  trusted: boolean;
  /** Git context at the end (`agent.git`). */
  git: boolean;
  /** `instructions` of connected servers the user trusts (their own, or a trusted repository's). */
  servers?: readonly { name: string; instructions: string }[];
  now?: Date;
  signal?: AbortSignal;
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

const serverSection = (servers: PromptOptions['servers']): string | undefined => {
  const parts = (servers ?? [])
    .filter((s) => s.instructions.trim())
    .map((s) => {
      const text = s.instructions.trim();
      const cut = text.length > MAX_SERVER_INSTRUCTIONS;
      return `### ${s.name}\n\n${cut ? `${text.slice(0, MAX_SERVER_INSTRUCTIONS)}\n[cut at ${MAX_SERVER_INSTRUCTIONS} characters]` : text}`;
    });
  return parts.length ? `## MCP server instructions\n\n${parts.join('\n\n')}` : undefined;
};

/**
 * The system prompt of a turn: what niffler is and how to work; your instruction files and —
 * only when the repository is trusted — its own, root down to the working directory, confined and
 * within a budget; trusted servers' instructions; git context at the end, refreshed per turn.
 */
export const buildSystemPrompt = async (options: PromptOptions): Promise<SystemPrompt> => {
  const instructions = gatherInstructions({
    root: options.root,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    home: options.home,
    trusted: options.trusted,
  });
  const sections = instructions.files.map((f) => `## ${f.title}\n\n${f.text}`);
  const servers = serverSection(options.servers);
  if (servers) sections.push(servers);
  const git = options.git ? await gitContext(options.root, options.signal) : undefined;
  const base = baseInstructions(options.root, options.hasTools, options.now ?? new Date());
  const text = [base, ...sections, ...(git ? [`## Git\n\n${git}`] : [])].join('\n\n');
  return {
    text,
    untrusted: instructions.untrusted,
    refused: instructions.refused,
    cut: instructions.cut,
    instructionChars: sections.reduce((sum, s) => sum + s.length, 0),
  };
};
