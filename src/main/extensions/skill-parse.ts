import { isObject } from '../../workers/shared/is-object.ts';
import { describeValue } from '../config/source.ts';
import { nifflerToolName } from './claude-names.ts';
import { parseMarkdown, type Parsed } from './parse.ts';

// A SKILL.md's frontmatter, checked as the Agent Skills specification (agentskills.io) and its
// reference validator (skills-ref) check it: `name` (1-64 lowercase letters, digits and hyphens,
// no leading, trailing or doubled hyphen, the directory's name), `description` (1-1024),
// `compatibility` (up to 500), `license`, `metadata` (a mapping), `allowed-tools`. Keys of other
// agents (Claude Code's `disable-model-invocation`, `model`, `hooks`…) are read and noted.

const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
const MAX_COMPATIBILITY = 500;

/** What the standard defines. */
const STANDARD = new Set([
  'name',
  'description',
  'license',
  'compatibility',
  'metadata',
  'allowed-tools',
]);

/** Keys other agents read, and what niffler makes of each. */
const PEER_KEYS: Record<string, string> = {
  'disable-model-invocation':
    "Claude Code's; true keeps the skill out of the model's list (activate it with /skills NAME)",
  'user-invocable': "Claude Code's; not used (every skill can be activated with /skills NAME)",
  'argument-hint': "Claude Code's; not used",
  model: "Claude Code's; not used (the session's model runs the skill)",
  context: "Claude Code's; not used (a skill runs in the session that activates it)",
  agent: "Claude Code's; not used (a skill runs under the session's agent profile)",
  hooks: "Claude Code's; not run (niffler runs hooks from its config, hooks:)",
  when_to_use: "Claude Code's; not used (the description says when)",
  version: 'not part of the standard; ignored (metadata: holds versions)',
  paths: "Claude Code's; not used",
};

/** What a SKILL.md's frontmatter says, checked. */
export interface SkillMeta {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  /** `allowed-tools` in niffler's names (`Read` → `read_file`); entries niffler cannot hold to are left out, with a note. */
  allowedTools?: string[];
  /** `allowed-tools` as written. */
  allowedToolsRaw?: string;
  /** Claude Code's `disable-model-invocation: true`: only the user activates it. */
  userOnly: boolean;
  /** Keys ignored and entries left out, one line each. */
  notes: string[];
}

/** The standard's name rule, for names in any script the spec allows (lowercase letters, digits). */
const NAME = /^[\p{Ll}\p{Lo}\p{Nd}]+(?:-[\p{Ll}\p{Lo}\p{Nd}]+)*$/u;

/** Why `name` breaks the standard's rules, or undefined. */
const nameProblem = (name: string): string | undefined => {
  if (name.length > MAX_NAME) return `is ${name.length} characters; at most ${MAX_NAME}`;
  if (name !== name.toLowerCase()) return 'must be lowercase';
  if (name.startsWith('-') || name.endsWith('-')) return 'must not start or end with a hyphen';
  if (name.includes('--')) return 'must not contain two hyphens in a row';
  if (!NAME.test(name)) return 'may hold only lowercase letters, digits and hyphens';
  return undefined;
};

/** `allowed-tools` words: spaces or commas between them, none inside `Bash(git add:*)`. */
const toolWords = (text: string): string[] => {
  const words: string[] = [];
  let word = '';
  let depth = 0;
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (c === ',' || /\s/.test(c))) {
      if (word) words.push(word);
      word = '';
    } else word += c;
  }
  if (word) words.push(word);
  return words;
};

/** `allowed-tools` in niffler's tool names; what it cannot hold to is noted and left out. */
const allowedTools = (raw: string[], notes: string[]): string[] =>
  raw.flatMap((word) => {
    const name = nifflerToolName(word);
    if (name !== undefined) return [name];
    notes.push(
      `allowed-tools: "${word}" names one use of a tool; niffler pre-approves whole tools only, so it is left out (the tool asks as usual)`,
    );
    return [];
  });

/** A field's value as text, or the problem with it. */
const text = (
  data: Record<string, unknown>,
  key: string,
  max: number | undefined,
  required: boolean,
): { value?: string; problem?: string } => {
  const value = data[key];
  if (value === undefined || value === null)
    return required ? { problem: `${key}: missing; the standard requires it` } : {};
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
    return { problem: `${key}: expected text, got ${describeValue(value)}` };
  const trimmed = String(value).trim();
  if (required && !trimmed) return { problem: `${key}: empty; the standard requires it` };
  if (max !== undefined && trimmed.length > max)
    return { problem: `${key}: ${trimmed.length} characters; at most ${max}` };
  return { value: trimmed };
};

/** The `allowed-tools` value as words: a space- or comma-separated string, or a list. */
const rawTools = (value: unknown): { words?: string[]; problem?: string } => {
  if (value === undefined || value === null) return {};
  if (typeof value === 'string') return { words: toolWords(value) };
  if (Array.isArray(value) && value.every((v) => typeof v === 'string'))
    return { words: value.flatMap((v) => toolWords(v)) };
  return { problem: `allowed-tools: expected tool names, got ${describeValue(value)}` };
};

/** Checks the frontmatter `data` of the skill in directory `dirName`; problems say what is wrong. */
const checkSkillMeta = (
  data: Record<string, unknown>,
  dirName: string,
): { meta?: SkillMeta; problems: string[] } => {
  const problems: string[] = [];
  const notes: string[] = [];
  const take = (r: { value?: string; problem?: string }) => {
    if (r.problem) problems.push(r.problem);
    return r.value;
  };
  const name = take(text(data, 'name', undefined, true))?.normalize('NFKC');
  if (name !== undefined) {
    const wrong = nameProblem(name);
    if (wrong) problems.push(`name: "${name}" ${wrong}`);
    else if (name !== dirName.normalize('NFKC'))
      problems.push(
        `name: "${name}" is not the name of its directory, "${dirName}"; the standard asks for both to be the same (rename one)`,
      );
  }
  const description = take(text(data, 'description', MAX_DESCRIPTION, true));
  const compatibility = take(text(data, 'compatibility', MAX_COMPATIBILITY, false));
  const license = take(text(data, 'license', undefined, false));
  const metadata = data['metadata'];
  if (metadata !== undefined && metadata !== null && !isObject(metadata))
    problems.push(`metadata: expected a mapping of keys to text, got ${describeValue(metadata)}`);
  const tools = rawTools(data['allowed-tools']);
  if (tools.problem) problems.push(tools.problem);
  for (const key of Object.keys(data))
    if (!STANDARD.has(key))
      notes.push(`${key}: ${PEER_KEYS[key] ?? 'not part of the Agent Skills standard; ignored'}`);
  if (problems.length || name === undefined || description === undefined) return { problems };
  return {
    problems,
    meta: {
      name,
      description,
      ...(license ? { license } : {}),
      ...(compatibility ? { compatibility } : {}),
      ...(isObject(metadata)
        ? { metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, String(v)])) }
        : {}),
      ...(tools.words
        ? { allowedTools: allowedTools(tools.words, notes), allowedToolsRaw: tools.words.join(' ') }
        : {}),
      userOnly: data['disable-model-invocation'] === true,
      notes,
    },
  };
};

const FENCE = /^---[ \t]*\r?$/;

/**
 * A SKILL.md's text (its beginning, at least the frontmatter) split and checked: the frontmatter's
 * meta, or every problem with it as `shown:line: what is wrong`.
 */
export const parseSkillFile = (
  text: string,
  shown: string,
  dirName: string,
): Parsed<{ meta: SkillMeta; body: string }> => {
  if (!FENCE.test(text.replace(/^\uFEFF/, '').split('\n', 1)[0] ?? ''))
    return {
      ok: false,
      problem: `${shown}:1: no frontmatter; a SKILL.md starts with a --- line, then name: and description:, then a --- line (agentskills.io/specification)`,
    };
  const markdown = parseMarkdown(text, shown);
  if (!markdown.ok) return markdown;
  const checked = checkSkillMeta(markdown.value.data, dirName);
  if (!checked.meta) {
    const lineOf = (problem: string) => markdown.value.lineOf([problem.split(':', 1)[0]!]) ?? 1;
    return {
      ok: false,
      problem: checked.problems.map((p) => `${shown}:${lineOf(p)}: ${p}`).join('\n'),
    };
  }
  return { ok: true, value: { meta: checked.meta, body: markdown.value.body } };
};
