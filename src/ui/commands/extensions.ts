import { listExtensions } from '../../main/extensions/handlers.ts';
import { usableExtensions } from '../../main/extensions/load.ts';
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
  if (options.json) return printJson({ agents: list.agents, problems: list.problems });
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
  print('\nUse one: niffler --agent NAME, /agent NAME, or shift-tab in a session');
};
