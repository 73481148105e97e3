import type {
  AgentInfo,
  ExtensionsList,
  ParamsOf,
  RequestContext,
  ResultOf,
  SkillInfo,
} from '../protocol.ts';
import type { LoadedConfig } from './workspace-config.ts';
import { NifflerError } from '../errors.ts';
import type { AgentProfile } from './agents.ts';
import { usableExtensions, type Extensions } from './load.ts';
import { findAgent } from './turn.ts';
import { skillListing } from './skill-list.ts';
import type { TaskRunner } from './task-runner.ts';

type ExtensionMethod =
  'session/agent' | 'extensions/list' | 'task/list' | 'task/run' | 'task/history';

/** What the requests about extensions need of the engine (the `Engine` is one). */
interface ExtensionsView {
  readonly loaded: LoadedConfig | null;
  readonly configError: string | null;
  readonly tasks: Pick<TaskRunner, 'list' | 'run' | 'history'>;
}

/** What `session/agent` needs of a session. */
interface AgentTarget {
  setAgent(name: string): void;
  saved(): Promise<void>;
}

/** An agent profile as listings show it. */
const agentInfo = (a: AgentProfile): AgentInfo => ({
  name: a.name,
  description: a.description,
  mode: a.mode,
  source: a.source,
  ...(a.file ? { file: a.file } : {}),
  ...(a.model ? { model: a.model } : {}),
  ...(a.tools ? { tools: a.tools } : {}),
  policy: a.policy,
  ...(a.maxSteps ? { maxSteps: a.maxSteps } : {}),
  notes: a.notes,
});

/** What `extensions/list` answers for the extensions that may be used (and every skill found). */
export const listExtensions = (
  extensions: Extensions,
  ignored?: string,
  skills?: SkillInfo[],
): ExtensionsList => ({
  agents: extensions.agents.map(agentInfo),
  commands: extensions.commands.map((c) => ({
    name: c.name,
    description: c.description,
    ...(c.argumentHint ? { argumentHint: c.argumentHint } : {}),
    source: c.source,
    file: c.file,
  })),
  tools: extensions.tools.map((t) => ({
    name: t.name,
    description: t.description,
    file: t.file,
    readOnly: t.annotations.readOnlyHint === true,
  })),
  ...(skills ? { skills } : {}),
  problems: [...extensions.problems, ...(ignored ? [ignored] : [])],
  notes: extensions.notes,
});

/** The engine's requests about agents, commands, repository tools and tasks. */
export const extensionHandlers = (
  engine: ExtensionsView,
  session: (id: string) => AgentTarget,
): {
  [M in ExtensionMethod]: (params: ParamsOf<M>, context: RequestContext) => Promise<ResultOf<M>>;
} => {
  const usable = () => {
    const loaded = engine.loaded;
    if (!loaded) throw new NifflerError('config-invalid', engine.configError ?? 'no config');
    return usableExtensions(loaded);
  };
  return {
    'session/agent': async ({ sessionId, agent }) => {
      findAgent(usable().extensions, agent);
      const target = session(sessionId);
      target.setAgent(agent);
      await target.saved();
      return { agent };
    },
    'extensions/list': async () => {
      const { extensions, ignored } = usable();
      const loaded = engine.loaded!;
      return listExtensions(
        extensions,
        ignored,
        skillListing(loaded.extensions, loaded.trust.level),
      );
    },
    'task/list': async () => engine.tasks.list(),
    'task/run': async ({ name, inputs }, { signal }) =>
      engine.tasks.run(name, inputs ?? {}, 'manual', signal),
    'task/history': async ({ name }) => engine.tasks.history(name),
  };
};
