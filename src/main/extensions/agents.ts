import { z } from 'zod';
import { PolicySchema, type ToolPolicy } from '../config/schema.ts';
import { listOf, nifflerToolName } from './claude-names.ts';
import type { ExtensionFile } from './files.ts';
import { checkFrontmatter, parseMarkdown, type Parsed, type YamlMapping } from './parse.ts';

/** Where an extension comes from: niffler itself, your `$NIFFLER_HOME`, or the repository. */
export type ExtensionSource = 'builtin' | 'user' | 'repo';

type AgentMode = 'primary' | 'subagent' | 'all';

/** One agent profile: what the model is told, which tools it sees and what they may do. */
export interface AgentProfile {
  name: string;
  description: string;
  /** A key of `models`: the model of its turns unless the user picked one. */
  model?: string;
  /** Tool names and globs it sees (`memory__*`, `!bash`); all when absent. */
  tools?: string[];
  /** Names and globs of the skills it is offered (`skills:`); all when absent, none when empty. */
  skills?: string[];
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
/** Read, not used, and not worth a note: keys that only change how a profile looks or samples. */
const quiet = z.unknown().optional();

/**
 * The frontmatter of an agent file: niffler's keys, and Claude Code's and opencode's that niffler
 * uses or that only display. Any other key (Claude Code's `memory`, `hooks`…) is noted
 * as not used and left out (see `checkFrontmatter`): the file still loads.
 */
const AgentSchema = z.strictObject({
  name: z.string().regex(NAME, 'expected letters, digits, ".", "_" or "-"').optional(),
  description: z.string().optional(),
  /** A key of `models`; `inherit` (Claude Code's) is the session's. */
  model: z.string().min(1).optional(),
  /** Names and globs; or opencode's mapping of tool → on/off. */
  tools: z.union([toolList, z.record(z.string(), z.boolean())]).optional(),
  /** Claude Code's denylist: each is a `!name` entry of `tools`. */
  disallowedTools: toolList.optional(),
  policy: z.record(z.string(), PolicySchema).optional(),
  /** opencode's: `edit`, `bash`, `webfetch` (or niffler's tool names) → ask | deny. */
  permission: z
    .record(z.string(), z.union([PolicySchema, z.record(z.string(), PolicySchema)]))
    .optional(),
  /** Claude Code's: `plan` makes the profile read-only; the other modes would only loosen. */
  permissionMode: z.string().optional(),
  maxSteps: z.number().int().positive().optional(),
  /** Claude Code's name for maxSteps. */
  maxTurns: z.number().int().positive().optional(),
  /** opencode's name for maxSteps (its older `maxSteps` is niffler's own). */
  steps: z.number().int().positive().optional(),
  mode: z.enum(['primary', 'subagent', 'all']).optional(),
  /** opencode's: true leaves the profile out. */
  disable: z.boolean().optional(),
  /** The skills the profile is offered (names or globs); Claude Code's key, which preloads them. */
  skills: toolList.optional(),
  color: quiet,
  temperature: quiet,
  hidden: quiet,
  top_p: quiet,
});

/** opencode's tool names, in niffler's. */
const OPENCODE_TOOLS: Record<string, string[]> = {
  write: ['write_file'],
  edit: ['edit_file', 'write_file'],
  patch: ['edit_file'],
  read: ['read_file'],
  list: ['list_dir'],
  bash: ['bash'],
  grep: ['grep'],
  glob: ['glob'],
  webfetch: ['fetch'],
  todowrite: ['todo'],
  todoread: ['todo'],
};

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

/** opencode's `tools: {write: false, …}`: the ones switched off, or only those on after `"*": false`. */
const toolsOfMapping = (value: Record<string, boolean>): string[] => {
  const names = (key: string) => OPENCODE_TOOLS[key] ?? [nifflerToolName(key) ?? key];
  const on = Object.entries(value).filter(([k, v]) => v && k !== '*');
  if (value['*'] === false) return on.length ? on.flatMap(([k]) => names(k)) : ['!*'];
  const off = Object.entries(value).filter(([, v]) => !v);
  return off.flatMap(([k]) => names(k).map((n) => `!${n}`));
};

const STRICTNESS = ['allow', 'ask', 'deny'] as const;

/** opencode's `permission:` as policy rules; per-command rules become the strictest of them. */
const permissionRules = (
  value: Record<string, ToolPolicy | Record<string, ToolPolicy>>,
  notes: string[],
): Record<string, ToolPolicy> => {
  const rules: Record<string, ToolPolicy> = {};
  for (const [key, rule] of Object.entries(value)) {
    let decision: ToolPolicy;
    if (typeof rule === 'string') decision = rule;
    else {
      decision = STRICTNESS[Math.max(...Object.values(rule).map((r) => STRICTNESS.indexOf(r)))]!;
      notes.push(
        `permission ${key}: niffler cannot hold to rules per command; the strictest, ${decision}, applies to all of it`,
      );
    }
    for (const tool of OPENCODE_TOOLS[key] ?? [nifflerToolName(key) ?? key]) rules[tool] = decision;
  }
  return rules;
};

/** The rules of a profile's `policy`, `permission` and `permissionMode`, tightening only. */
const policyOf = (meta: z.infer<typeof AgentSchema>, notes: string[]): AgentProfile['policy'] => {
  const policy: AgentProfile['policy'] = {};
  const rules: Record<string, ToolPolicy> = {};
  const sources = [
    meta.permission ? permissionRules(meta.permission, notes) : {},
    meta.permissionMode === 'plan' ? READ_ONLY : {},
    meta.policy ?? {},
  ];
  // Where two say something of one tool, the stricter holds.
  for (const source of sources)
    for (const [tool, rule] of Object.entries(source))
      if (STRICTNESS.indexOf(rule) >= STRICTNESS.indexOf(rules[tool] ?? 'allow'))
        rules[tool] = rule;
  for (const [tool, rule] of Object.entries(rules))
    if (rule === 'allow') notes.push(`policy ${tool}: allow dropped (a profile only tightens)`);
    else policy[tool] = rule;
  if (meta.permissionMode && !['plan', 'default'].includes(meta.permissionMode))
    notes.push(
      `permissionMode ${meta.permissionMode} not used: it would loosen approvals, and a profile only tightens`,
    );
  return policy;
};

/** The tools entry of a profile: `tools` (a list or opencode's mapping) less `disallowedTools`. */
const profileTools = (meta: z.infer<typeof AgentSchema>, notes: string[]) => {
  const listed =
    meta.tools !== undefined && typeof meta.tools === 'object' && !Array.isArray(meta.tools)
      ? toolsOfMapping(meta.tools)
      : toolsOf(meta.tools, notes);
  const denied = toolsOf(meta.disallowedTools, notes)?.map((t) => `!${t.replace(/^!/, '')}`);
  return denied?.length ? [...(listed ?? []), ...denied] : listed;
};

/** An agent read: its profile, what its trust part covers, and the keys it left unused. */
interface ReadAgent {
  profile: AgentProfile;
  frontmatter: Record<string, unknown>;
  /** `file:line key: not used by niffler; ignored`. */
  notes: string[];
}

/**
 * An agent's settings (`mapping`: a Markdown file's frontmatter, or an entry of opencode.json's
 * `agent`) and its prompt read into a profile named `name` unless it says its own; `mode`
 * defaults to `defaultMode` (`subagent` for Claude Code's files). Undefined `value` when it says
 * `disable: true` (opencode's).
 */
export const agentFromMapping = (
  mapping: YamlMapping,
  prompt: string,
  at: { shown: string; file: string; name: string },
  source: ExtensionSource,
  defaultMode: AgentMode = 'all',
): Parsed<ReadAgent | undefined> => {
  const checked = checkFrontmatter(AgentSchema, mapping, at.shown, {
    hooks:
      'not run: niffler runs hooks from .claude/settings.json and its config (hooks:), not while one agent runs; ignored',
  });
  if (!checked.ok) return checked;
  const meta = checked.value.value;
  if (meta.disable) return { ok: true, value: undefined };
  const name = meta.name ?? at.name;
  if (!NAME.test(name))
    return { ok: false, problem: `${at.shown}:1: "${name}" is not a usable agent name` };
  const notes: string[] = [];
  const policy = policyOf(meta, notes);
  const tools = profileTools(meta, notes);
  const maxSteps = meta.maxSteps ?? meta.maxTurns ?? meta.steps;
  const skills = listOf(meta.skills);
  const profile: AgentProfile = {
    name,
    description: meta.description ?? '',
    ...(meta.model && meta.model !== 'inherit' ? { model: meta.model } : {}),
    ...(tools ? { tools } : {}),
    ...(skills ? { skills } : {}),
    policy,
    ...(maxSteps ? { maxSteps } : {}),
    mode: meta.mode ?? defaultMode,
    prompt,
    source,
    file: at.file,
    notes,
  };
  return {
    ok: true,
    value: { profile, frontmatter: mapping.data, notes: checked.value.notes },
  };
};

/** An agent file (Markdown: frontmatter, then the prompt) read into a profile; see `agentFromMapping`. */
export const parseAgent = (
  file: ExtensionFile,
  source: ExtensionSource,
  defaultMode: AgentMode = 'all',
): Parsed<ReadAgent | undefined> => {
  const markdown = parseMarkdown(file.text, file.shown);
  if (!markdown.ok) return markdown;
  return agentFromMapping(
    markdown.value,
    markdown.value.body,
    { shown: file.shown, file: file.file, name: file.name },
    source,
    defaultMode,
  );
};
