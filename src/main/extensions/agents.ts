import { z } from 'zod';
import { PolicySchema, type ToolPolicy } from '../config/schema.ts';
import { listOf, nifflerToolName } from './claude-names.ts';
import type { ExtensionFile } from './files.ts';
import { checkSchema, parseMarkdown, type Parsed } from './parse.ts';

/** Where an extension comes from: niffler itself, your `$NIFFLER_HOME`, or the repository. */
export type ExtensionSource = 'builtin' | 'user' | 'repo';

export type AgentMode = 'primary' | 'subagent' | 'all';

/** One agent profile: what the model is told, which tools it sees and what they may do. */
export interface AgentProfile {
  name: string;
  description: string;
  /** A key of `models`: the model of its turns unless the user picked one. */
  model?: string;
  /** Tool names and globs it sees (`memory__*`, `!bash`); all when absent. */
  tools?: string[];
  /** Its rules, tightening only: `allow`s were dropped when it was read. */
  policy: Record<string, Exclude<ToolPolicy, 'allow'>>;
  maxSteps?: number;
  mode: AgentMode;
  /** Added to the system prompt. */
  prompt: string;
  source: ExtensionSource;
  file?: string;
  /** What reading it noted (an `allow` dropped, a tool rule niffler cannot hold to). */
  notes: string[];
}

/** A profile or command name: letters, digits, `-`, `_`, `.`. */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const toolList = z.union([z.array(z.string().min(1)), z.string()]);

/** The frontmatter of an agent file (niffler's, opencode's and Claude Code's keys). */
export const AgentSchema = z.strictObject({
  name: z.string().regex(NAME, 'expected letters, digits, ".", "_" or "-"').optional(),
  description: z.string().optional(),
  model: z.string().min(1).optional(),
  tools: toolList.optional(),
  policy: z.record(z.string(), PolicySchema).optional(),
  maxSteps: z.number().int().positive().optional(),
  mode: z.enum(['primary', 'subagent', 'all']).optional(),
  /** Claude Code's and opencode's display keys: read, not used. */
  color: z.string().optional(),
  temperature: z.number().optional(),
});

const READ_ONLY: AgentProfile['policy'] = {
  write_file: 'deny',
  edit_file: 'deny',
  bash: 'deny',
};

/** The profiles niffler has without any file. */
export const BUILTIN_AGENTS: AgentProfile[] = [
  {
    name: 'build',
    description: 'the default: every tool, under your policy',
    policy: {},
    mode: 'all',
    prompt: '',
    source: 'builtin',
    notes: [],
  },
  {
    name: 'plan',
    description: 'read-only: looks and plans; write_file, edit_file and bash are denied',
    policy: READ_ONLY,
    mode: 'primary',
    prompt:
      'You are in plan mode: read and search as much as you need, then answer with a plan. ' +
      'You cannot change files or run commands in this mode; say what you would change.',
    source: 'builtin',
    notes: [],
  },
  {
    name: 'review',
    description: 'reviews changes read-only: findings by severity, with file:line',
    policy: { write_file: 'deny', edit_file: 'deny' },
    mode: 'all',
    prompt:
      'You are reviewing code. Look at what changed (git diff, the files around it) and report ' +
      'findings ordered by severity, each with file:line, what is wrong and how to fix it. ' +
      'Do not change files.',
    source: 'builtin',
    notes: [],
  },
];

/** Tool rules of a profile in niffler's names; those that cannot be held to are noted. */
const toolsOf = (value: string | string[] | undefined, notes: string[]): string[] | undefined =>
  listOf(value)?.flatMap((raw) => {
    const negated = raw.startsWith('!');
    const name = nifflerToolName(negated ? raw.slice(1) : raw);
    if (name === undefined) {
      notes.push(`tools: "${raw}" names one use of a tool; niffler gives or withholds whole tools`);
      return [];
    }
    return [negated ? `!${name}` : name];
  });

/** An agent file read into a profile; `mode` defaults to `subagent` for Claude Code's files. */
export const parseAgent = (
  file: ExtensionFile,
  source: ExtensionSource,
  defaultMode: AgentMode = 'all',
): Parsed<AgentProfile & { frontmatter: Record<string, unknown> }> => {
  const markdown = parseMarkdown(file.text, file.shown);
  if (!markdown.ok) return markdown;
  const checked = checkSchema(AgentSchema, markdown.value, file.shown);
  if (!checked.ok) return checked;
  const meta = checked.value;
  const notes: string[] = [];
  const policy: AgentProfile['policy'] = {};
  for (const [tool, rule] of Object.entries(meta.policy ?? {}))
    if (rule === 'allow') notes.push(`policy ${tool}: allow dropped (a profile only tightens)`);
    else policy[tool] = rule;
  const name = meta.name ?? file.name;
  if (!NAME.test(name))
    return { ok: false, problem: `${file.shown}:1: "${name}" is not a usable agent name` };
  const tools = toolsOf(meta.tools, notes);
  return {
    ok: true,
    value: {
      name,
      description: meta.description ?? '',
      ...(meta.model ? { model: meta.model } : {}),
      ...(tools ? { tools } : {}),
      policy,
      ...(meta.maxSteps ? { maxSteps: meta.maxSteps } : {}),
      mode: meta.mode ?? defaultMode,
      prompt: markdown.value.body,
      source,
      file: file.file,
      notes,
      frontmatter: markdown.value.data,
    },
  };
};
