import { existsSync } from 'node:fs';
import path from 'node:path';
import { gitContext } from './git.ts';
import {
  gatherInstructions,
  INSTRUCTIONS_BUDGET,
  repositoryInstructionFiles,
} from './instructions.ts';

/** Characters of MCP server instructions given to the model: per server, and in all. */
export const MAX_INSTRUCTIONS = { perServer: 4_000, total: 12_000 };

/** The repository's instruction files at its root (names only; nothing is read). */
export const promptFilesPresent = (root: string): string[] =>
  repositoryInstructionFiles(root)
    .filter((file) => existsSync(file))
    .map((file) => path.relative(root, file));

/** What went into the system prompt, what was left out and why, and what each part weighs. */
interface SystemPrompt {
  text: string;
  /** Repository instruction files left out because the repository is not trusted. */
  untrusted: string[];
  /** Files refused: outside the workspace, not a regular file, unreadable, an import loop. */
  refused: { file: string; why: string }[];
  /** Files cut to the instructions budget. */
  cut: string[];
  /** Characters of the instructions (files and server instructions) within `text`. */
  instructionChars: number;
  /** What `text` is made of, part by part, for `/context`. */
  parts: PromptPart[];
}

/** One part of the system prompt: its characters, and what was cut or left out of it. */
export interface PromptPart {
  kind: 'niffler' | 'agent' | 'file' | 'server' | 'hooks' | 'skills' | 'git';
  name: string;
  chars: number;
  note?: string;
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
  instructions?: readonly { server: string; text: string }[];
  /** The agent profile of the turn: its prompt follows niffler's own. */
  agent?: { name: string; prompt: string };
  /** What SessionStart hooks gave the model. */
  hookContext?: readonly string[];
  /** The skills offered, by name and description (`extensions/skill-catalog.ts`). */
  skills?: string;
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

/**
 * The `instructions` of MCP servers (from `initialize` or `server/discover`), each under its
 * server's name, each cut at `MAX_INSTRUCTIONS.perServer` and all at `.total`.
 */
const instructionsSection = (
  list: readonly { server: string; text: string }[],
  shown: PromptPart[],
): string | undefined => {
  let left = MAX_INSTRUCTIONS.total;
  const parts: string[] = [];
  for (const { server, text } of list) {
    const limit = Math.min(MAX_INSTRUCTIONS.perServer, left);
    const trimmed = text.trim();
    if (!trimmed) continue;
    if (limit <= 0) {
      shown.push({
        kind: 'server',
        name: server,
        chars: 0,
        note: `left out: server instructions are limited to ${MAX_INSTRUCTIONS.total} characters in all`,
      });
      continue;
    }
    const cut = trimmed.length > limit;
    const part = `### ${server}\n\n${cut ? `${trimmed.slice(0, limit)}\n\n[cut here]` : trimmed}`;
    parts.push(part);
    shown.push({
      kind: 'server',
      name: server,
      chars: part.length + 2,
      ...(cut ? { note: `cut at ${limit} of ${trimmed.length} characters` } : {}),
    });
    left -= Math.min(trimmed.length, limit);
  }
  if (parts.length === 0) return undefined;
  const intro =
    'How to use the tools of these MCP servers, in their own words (server__tool names are theirs):';
  return `## Instructions from MCP servers\n\n${intro}\n\n${parts.join('\n\n')}`;
};

/** The parts of the instruction files: each file given, and each left out, with why. */
const fileParts = (instructions: ReturnType<typeof gatherInstructions>): PromptPart[] => [
  ...instructions.files.map((f): PromptPart => ({
    kind: 'file',
    name: f.file,
    chars: `## ${f.title}\n\n${f.text}`.length + 2,
    ...(instructions.cut.includes(f.file)
      ? { note: `cut: instruction files are limited to ${INSTRUCTIONS_BUDGET} bytes in all` }
      : {}),
  })),
  ...instructions.untrusted.map((file): PromptPart => ({
    kind: 'file',
    name: file,
    chars: 0,
    note: 'not given: the repository is not trusted',
  })),
  ...instructions.refused.map(({ file, why }): PromptPart => ({
    kind: 'file',
    name: file,
    chars: 0,
    note: `not given: it ${why}`,
  })),
];

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
  const serverParts: PromptPart[] = [];
  const servers = instructionsSection(options.instructions ?? [], serverParts);
  if (servers) sections.push(servers);
  const hooks = options.hookContext?.length
    ? `## Session context (from hooks)\n\n${options.hookContext.join('\n\n')}`
    : undefined;
  if (hooks) sections.push(hooks);
  const git = options.git ? await gitContext(options.root, options.signal) : undefined;
  const base = baseInstructions(options.root, options.hasTools, options.now ?? new Date());
  const agent = options.agent ? [`## Agent: ${options.agent.name}\n\n${options.agent.prompt}`] : [];
  const gitSection = git ? `## Git\n\n${git}` : undefined;
  const skills = options.skills ? [options.skills] : [];
  const text = [base, ...agent, ...sections, ...skills, ...(gitSection ? [gitSection] : [])].join(
    '\n\n',
  );
  const parts: PromptPart[] = [
    { kind: 'niffler', name: "niffler's instructions", chars: base.length },
    ...(options.agent
      ? [
          {
            kind: 'agent' as const,
            name: `agent ${options.agent.name}`,
            chars: agent[0]!.length + 2,
          },
        ]
      : []),
    ...fileParts(instructions),
    ...serverParts,
    ...(hooks
      ? [{ kind: 'hooks' as const, name: 'SessionStart hooks', chars: hooks.length + 2 }]
      : []),
    ...(options.skills
      ? [{ kind: 'skills' as const, name: 'skills offered', chars: options.skills.length + 2 }]
      : []),
    ...(gitSection
      ? [{ kind: 'git' as const, name: 'git context', chars: gitSection.length + 2 }]
      : []),
  ];
  return {
    text,
    untrusted: instructions.untrusted,
    refused: instructions.refused,
    cut: instructions.cut,
    instructionChars: sections.reduce((sum, s) => sum + s.length, 0),
    parts,
  };
};
