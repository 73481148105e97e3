import type { ToolSpec } from '../../workers/protocol/api.ts';
import type { Skill } from './skills.ts';

// Progressive disclosure, as the standard intends: a session's system prompt names the skills it
// is offered and says what each is for — within a budget, so two hundred installed skills cost
// the first request a few KiB, not a hundred — and the `skill` tool gives one skill's
// instructions and files when the model (or the user, with /skills NAME) activates it.

/** The catalog's characters at most, whatever the window (200 skills add ≤ 6 KiB to a request). */
export const SKILL_CATALOG_MAX = 4_500;
/** …and at most this share of the model's context window (4 characters a token), as Codex does. */
const SKILL_CATALOG_SHARE = 0.02;
/** Characters of one description in the catalog, at most (the tool gives the rest). */
const DESCRIPTION_CUTS = [250, 160, 100, 60];

export const SKILL_TOOL = 'skill';

/** The catalog's budget for a model with a `window`-token context. */
export const catalogBudget = (window: number): number =>
  Math.max(400, Math.min(SKILL_CATALOG_MAX, Math.floor(window * 4 * SKILL_CATALOG_SHARE)));

const INTRO =
  "Skills hold instructions for particular tasks, with files (scripts, references, templates) beside them. When a task matches a skill's description, call the skill tool with its name before you start: it returns the skill's instructions and lists its files.";

const cut = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** Lines naming `names`, as many as fit `room` characters, and how many did not. */
const namesLine = (names: readonly string[], room: number): { line: string; left: number } => {
  const head = 'Also (by name only): ';
  let line = head;
  let i = 0;
  for (; i < names.length; i++) {
    const next = `${i ? ', ' : ''}${names[i]}`;
    if (line.length + next.length > room) break;
    line += next;
  }
  return { line: i ? line : '', left: names.length - i };
};

/**
 * The Skills section of the system prompt for the skills `offered` (in order: the first get their
 * descriptions when not all fit), within `budget` characters: every name with its description
 * when they fit, descriptions shortened first, then names only for the rest, then a count.
 * `active` names the skills this session activated. Undefined when there are none.
 */
export const skillCatalog = (
  offered: readonly Pick<Skill, 'name' | 'description'>[],
  budget: number,
  active: readonly string[] = [],
): string | undefined => {
  if (offered.length === 0) return undefined;
  const activeLine = active.length
    ? `\nActive in this session: ${active.join(', ')} (call the skill tool again if its instructions are no longer above).`
    : '';
  const head = `## Skills\n\n${INTRO}\n`;
  const entry = (s: Pick<Skill, 'name' | 'description'>, max: number) =>
    `\n- ${s.name}: ${cut(s.description, max)}`;
  const room = budget - head.length - activeLine.length;
  for (const max of DESCRIPTION_CUTS) {
    const all = offered.map((s) => entry(s, max)).join('');
    if (all.length <= room) return `${head}${all}${activeLine}`;
  }
  // Not all fit even shortened: the first with short descriptions, as long as the names of the
  // rest still fit after them; then names; then how many are left.
  const shortest = DESCRIPTION_CUTS.at(-1)!;
  const tail = 160;
  let listed = '';
  let i = 0;
  for (; i < offered.length; i++) {
    const next = entry(offered[i]!, shortest);
    const restNames = offered.slice(i + 1).reduce((n, s) => n + s.name.length + 2, 0);
    if (listed.length + next.length + Math.min(restNames, room / 2) + tail > room) break;
    listed += next;
  }
  const names = namesLine(
    offered.slice(i).map((s) => s.name),
    room - listed.length - tail,
  );
  const more = names.left
    ? `\nAnd ${names.left} more: the skill tool names every skill when asked for one it does not know.`
    : '';
  return `${head}${listed}${names.line ? `\n${names.line}` : ''}${more}${activeLine}`;
};

/** The `skill` tool as the model sees it. */
export const skillToolSpec = (): ToolSpec => ({
  name: SKILL_TOOL,
  description:
    'Activate a skill (see Skills in the system prompt): returns its instructions (SKILL.md) and the list of files in its directory, which you may then read with read_file and run with bash. Activate a skill before doing the task it describes.',
  inputSchema: {
    type: 'object',
    properties: { name: { type: 'string', description: "the skill's name, as listed" } },
    required: ['name'],
  },
});
