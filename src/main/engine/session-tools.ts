import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import { usableExtensions } from '../extensions/load.ts';
import { repoToolEntry } from '../extensions/repo-tools.ts';
import { SKILL_TOOL } from '../extensions/skill-catalog.ts';
import type { SessionSkills } from '../extensions/skill-session.ts';
import { taskTool, type SubagentRun } from '../extensions/subagents.ts';
import { chainTools } from '../extensions/turn.ts';
import type { ProfileLimit } from '../trust/effective.ts';
import { noCommands, type SessionDeps } from './session-deps.ts';
import { buildToolTable, type TableFor, type ToolTable } from './tool-calls.ts';

/** What a session's tool table is built from. */
interface ToolsView {
  readonly deps: Pick<SessionDeps, 'tools' | 'mcp' | 'config' | 'lsp' | 'runCommand' | 'root'>;
  /** What the session switched off. */
  readonly disabled: ReadonlySet<string>;
  /** How deep in subagents the session is. */
  readonly depth: number;
  readonly skills: Pick<SessionSkills, 'tool'>;
}

/**
 * The tools of a step: built-ins and ready servers' less what this session switched off, as
 * the turn's agent sees them, with `task` while subagents may nest deeper.
 */
export const sessionToolTable = async (
  view: ToolsView,
  chain: ProfileLimit[],
  model: TableFor['model'],
  runChild: (job: SubagentRun) => Promise<ToolResult>,
): Promise<ToolTable> => {
  const { deps, disabled } = view;
  const loaded = deps.config();
  const base = await buildToolTable(deps.tools, deps.mcp, disabled, {
    model,
    config: loaded,
  });
  const { subagents } = loaded.config.agent;
  const usable = usableExtensions(loaded);
  const children = usable.extensions.agents.filter((a) => a.mode !== 'primary');
  if (view.depth < subagents.maxDepth && children.length && !disabled.has('task'))
    base.set('task', taskTool(children, runChild));
  for (const [name, entry] of deps.lsp?.tools(disabled) ?? []) base.set(name, entry);
  const run = deps.runCommand ?? noCommands;
  for (const tool of usable.extensions.tools)
    if (!disabled.has(tool.name) && !disabled.has('repo') && !base.has(tool.name))
      base.set(
        tool.name,
        repoToolEntry(tool, run, deps.root, () =>
          usableExtensions(deps.config()).extensions.tools.find((t) => t.name === tool.name),
        ),
      );
  const table = chainTools(base, chain);
  // Skills follow the profile's `skills:` list, not its `tools:`.
  const skill = view.skills.tool(chain);
  if (skill && !disabled.has(SKILL_TOOL) && !table.has(SKILL_TOOL)) table.set(SKILL_TOOL, skill);
  return table;
};
