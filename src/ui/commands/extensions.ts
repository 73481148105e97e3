import { listExtensions } from '../../main/extensions/handlers.ts';
import { usableExtensions } from '../../main/extensions/load.ts';
import { skillListing } from '../../main/extensions/skill-list.ts';
import { tildify } from '../../main/paths.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { formatTable, print, printJson, warn } from '../render/output.ts';

/** The extensions this workspace may use now, and what was skipped or left out. */
const usable = (options: GlobalOptions) => {
  const loaded = loadForCommand(options);
  const { extensions, ignored } = usableExtensions(loaded);
  return listExtensions(extensions, ignored);
};

/** `niffler agents [--json]`: every agent profile this workspace can use, and where it is from. */
export const agents = (options: GlobalOptions): void => {
  const list = usable(options);
  if (options.json)
    return printJson({ agents: list.agents, problems: list.problems, notes: list.notes });
  print(
    formatTable(
      ['NAME', 'MODE', 'SOURCE', 'TOOLS', 'DESCRIPTION'],
      list.agents.map((a) => [
        a.name,
        a.mode,
        a.file ? `${a.source} ${tildify(a.file)}` : a.source,
        a.tools ? a.tools.join(' ') : 'all',
        a.description,
      ]),
    ),
  );
  for (const agent of list.agents) for (const note of agent.notes) warn(`${agent.name}: ${note}`);
  for (const problem of list.problems) warn(problem);
  for (const note of list.notes) warn(note);
  print('\nUse one: niffler --agent NAME, /agent NAME, or shift-tab in a session');
};

/**
 * `niffler skills [--json]`: every skill found — the repository's and yours, where each was read,
 * its trust, whether the model is offered it — and, for each that is not, why.
 */
export const skills = (options: GlobalOptions): void => {
  const loaded = loadForCommand(options);
  const list = skillListing(loaded.extensions, loaded.trust.level);
  const problems = loaded.extensions.skillProblems;
  if (options.json) return printJson({ skills: list, problems });
  if (list.length === 0)
    print(
      'no skills found: a skill is a directory NAME/ with a SKILL.md, in .niffler/skills, .agents/skills, .claude/skills, .gemini/skills or .opencode/skills of the repository, or in $NIFFLER_HOME/skills, ~/.agents/skills or ~/.claude/skills',
    );
  else
    print(
      formatTable(
        ['NAME', 'SOURCE', 'TRUST', 'OFFERED', 'DESCRIPTION'],
        list.map((s) => [
          s.name,
          `${s.source} ${s.location}`,
          s.trust,
          s.offered ? 'yes' : 'no',
          s.description.replace(/\s+/g, ' ').slice(0, 80),
        ]),
      ),
    );
  for (const skill of list) for (const problem of skill.problems) warn(`${skill.name}: ${problem}`);
  for (const problem of problems) warn(problem);
  if (list.some((s) => s.offered))
    print(
      '\nThe model activates one when a task matches it; /skills NAME in a session does it by hand',
    );
};
