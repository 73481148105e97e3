import { z } from 'zod';
import { NAME, type ExtensionSource } from './agents.ts';
import { listOf } from './claude-names.ts';
import type { ExtensionFile } from './files.ts';
import { checkFrontmatter, parseMarkdown, type Parsed } from './parse.ts';

/** A slash command written as a Markdown file: `git/commit.md` is `/git:commit`. */
export interface CustomCommand {
  name: string;
  description: string;
  argumentHint?: string;
  /** The agent profile its turn runs with. */
  agent?: string;
  model?: string;
  /** Tools allowed without asking for its turn (a `deny` anywhere still wins). */
  allowedTools?: string[];
  /** The prompt: `$ARGUMENTS`, `$1`…, `@path`, and `` !`cmd` `` expand when it is sent. */
  body: string;
  /** The `` !`cmd` `` commands of the body, in order. */
  shell: string[];
  source: ExtensionSource;
  file: string;
}

/**
 * The frontmatter of a command file (Claude Code's keys; niffler adds `agent`). Other keys
 * (Claude Code's `name`, opencode's `subtask`…) are noted and ignored, never a reason to skip.
 */
const CommandSchema = z.strictObject({
  description: z.string().optional(),
  /** Claude Code's files often write `[message]`, which YAML reads as a list. */
  'argument-hint': z.union([z.string(), z.array(z.unknown())]).optional(),
  agent: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  'allowed-tools': z.union([z.array(z.string().min(1)), z.string()]).optional(),
  /** Claude Code's: read, not used (niffler never runs a command by itself). */
  'disable-model-invocation': z.boolean().optional(),
});

/** `` !`cmd` `` in a command's body. */
export const SHELL_PATTERN = /!`([^`\n]+)`/g;

/**
 * A command file read: its name from its path (`git/commit` → `git:commit`), its frontmatter
 * checked. Its trust part — frontmatter and shell commands — exists only when it runs something
 * or allows tools: a plain prompt needs no trust.
 */
export const parseCommand = (
  file: ExtensionFile,
  dir: { source: ExtensionSource },
): Parsed<{ item: CustomCommand; trustValue?: unknown; notes: string[] }> => {
  const segments = file.name.split('/');
  const bad = segments.find((s) => !NAME.test(s));
  if (bad !== undefined)
    return { ok: false, problem: `${file.shown}:1: "${bad}" cannot be part of a command name` };
  const markdown = parseMarkdown(file.text, file.shown);
  if (!markdown.ok) return markdown;
  const checked = checkFrontmatter(CommandSchema, markdown.value, file.shown);
  if (!checked.ok) return checked;
  const { value: meta, notes } = checked.value;
  const body = markdown.value.body;
  const shell = [...body.matchAll(SHELL_PATTERN)].map((m) => m[1]!);
  const allowedTools = listOf(meta['allowed-tools']);
  const raw = meta['argument-hint'];
  const hint = Array.isArray(raw) ? `[${raw.map(String).join(', ')}]` : raw;
  const item: CustomCommand = {
    name: segments.join(':'),
    description: meta.description ?? body.split('\n')[0]?.slice(0, 80) ?? '',
    ...(hint ? { argumentHint: hint } : {}),
    ...(meta.agent ? { agent: meta.agent } : {}),
    ...(meta.model ? { model: meta.model } : {}),
    ...(allowedTools ? { allowedTools } : {}),
    body,
    shell,
    source: dir.source,
    file: file.file,
  };
  const needsTrust = shell.length > 0 || (allowedTools?.length ?? 0) > 0;
  return {
    ok: true,
    value: {
      item,
      notes,
      ...(needsTrust ? { trustValue: { frontmatter: markdown.value.data, shell } } : {}),
    },
  };
};
