import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { usableExtensions, type Loaded } from '../extensions/load.ts';
import { skillContent } from '../extensions/skill-content.ts';
import { resolveSkills, type Skill } from '../extensions/skills.ts';

// The workspace's skills as MCP prompts, so a gateway client can use them too: `skill__NAME`
// lists with the skill's description, and getting it gives what activating it gives a session's
// model (the SKILL.md body, its directory and files), with the client's request after it. The
// same skills a session is offered: yours, a trusted repository's, the nearest of each name. A
// client scoped to one server (`--server NAME`) gets none.

const PREFIX = 'skill__';

/** The skills served to a client of `scope`. */
const served = (loaded: LoadedConfig | null, scope: string | undefined): Loaded<Skill>[] =>
  loaded && !scope ? resolveSkills(usableExtensions(loaded).extensions.skills).winners : [];

/** `prompts/list` entries for the skills. */
export const skillPromptList = (loaded: LoadedConfig | null, scope: string | undefined) =>
  served(loaded, scope).map((s) => ({
    name: `${PREFIX}${s.name}`,
    description: s.description,
    arguments: [
      { name: 'request', description: 'what to do with the skill (optional)', required: false },
    ],
  }));

/**
 * What `prompts/get` answers for the skill prompt `name`, or undefined when `name` is not one;
 * throws (with what to do) when the skill cannot be read or changed since it was trusted.
 */
export const getSkillPrompt = (
  loaded: LoadedConfig | null,
  scope: string | undefined,
  root: string,
  name: string,
  args: Record<string, string> | undefined,
) => {
  if (!name.startsWith(PREFIX)) return undefined;
  const skill = served(loaded, scope).find((s) => `${PREFIX}${s.name}` === name);
  if (!skill) return undefined;
  const { text } = skillContent(skill, root);
  const request = args?.['request']?.trim();
  return {
    description: skill.description,
    messages: [
      {
        role: 'user' as const,
        content: { type: 'text' as const, text: request ? `${text}\n\n${request}` : text },
      },
    ],
  };
};
