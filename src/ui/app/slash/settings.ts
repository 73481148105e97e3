import type { SkillInfo } from '../../../main/protocol.ts';
import type { SlashContext } from './context.ts';

// `/agent`, `/skills`, `/model` and `/config`: what this session runs with.

/** `/agent [NAME]`: the profiles, or run this session's turns with NAME from now on. */
export const agent = async (ctx: SlashContext, args: string[]) => {
  const [name] = args;
  const { extensions, agent: current } = ctx.getState();
  if (!name) {
    const text = extensions.agents
      .map((a) => {
        const mark = a.name === current ? '›' : ' ';
        return `${mark} ${a.name.padEnd(12)} ${a.mode.padEnd(8)} ${a.source.padEnd(7)} ${a.description}`;
      })
      .join('\n');
    return ctx.dispatch({
      type: 'output',
      title: 'Agents',
      text: `${text || '(none listed)'}\n\n/agent NAME switches; shift-tab cycles the primary ones`,
    });
  }
  const result = await ctx.client.request('session/agent', {
    sessionId: await ctx.sessionId(),
    agent: name,
  });
  ctx.dispatch({ type: 'agent', agent: result.agent });
  ctx.dispatch({
    type: 'notice',
    level: 'info',
    text: `agent: ${result.agent} from the next message on`,
  });
};

/** The names `/skills NAME` can activate: yours and trusted ones, with a description. */
export const activatableSkills = (skills: readonly SkillInfo[]): string[] => [
  ...new Set(
    skills
      .filter((s) => s.trust === 'yours' || s.trust === 'trusted')
      .filter((s) => s.description)
      .map((s) => s.name),
  ),
];

/** `/skills`: every skill found, offered or not and why (`/skills NAME` goes to the engine). */
export const skills = async (ctx: SlashContext) => {
  const list = await ctx.client.request('extensions/list', {});
  const found = list.skills ?? [];
  const lines = found.map((s) => {
    const mark = s.offered ? '•' : ' ';
    const about = s.description.replace(/\s+/g, ' ').slice(0, 90);
    return `${mark} ${s.name.padEnd(24)} ${`${s.source} ${s.location}`.padEnd(24)} ${s.trust.padEnd(9)} ${about}`;
  });
  for (const s of found) for (const problem of s.problems) lines.push(`  ${s.name}: ${problem}`);
  const text = found.length
    ? `${lines.join('\n')}\n\n• offered to the model; /skills NAME [request] activates one now`
    : 'no skills found (niffler skills --help says where they are read from)';
  ctx.dispatch({ type: 'output', title: 'Skills', text });
};

export const model = async (ctx: SlashContext, args: string[]) => {
  // The config loader (zod, yaml) is loaded only when a command needs it.
  const { loadConfig } = await import('../../../main/extensions/workspace-config.ts');
  const loaded = loadConfig({ root: ctx.root, env: ctx.env });
  const models = loaded.ok ? Object.keys(loaded.value.config.models) : [];
  const [name] = args;
  if (!name) {
    const current = ctx.getState().model;
    const text = models.length
      ? models.map((m) => `${m === current ? '›' : ' '} ${m}`).join('\n')
      : `${current} (no models configured; see .niffler.example/config.yaml)`;
    return ctx.dispatch({ type: 'output', title: 'Models', text });
  }
  if (models.length && !models.includes(name))
    throw new Error(
      `no model named "${name}" (configured: ${models.join(', ')}); add it under models: in the config`,
    );
  ctx.setModel(name);
  ctx.dispatch({ type: 'model', model: name });
  ctx.dispatch({ type: 'notice', level: 'info', text: `model: ${name} from the next message on` });
};

export const config = async (ctx: SlashContext) => {
  const status = await ctx.client.request('daemon/status', {});
  const state = ctx.getState();
  const lines = [
    `workspace  ${status.root}`,
    `model      ${state.model}`,
    `daemon     pid ${status.pid}, ${status.socket ?? 'in-process'}`,
    '',
    'config files (lowest precedence first):',
    ...status.configFiles.map((f) => `  ${f.exists ? '✓' : '·'} ${f.kind.padEnd(7)} ${f.file}`),
    ...(status.configError ? ['', `error: ${status.configError}`] : []),
    '',
    'niffler config show --origin prints every value and where it came from.',
  ];
  ctx.dispatch({ type: 'output', title: 'Config', text: lines.join('\n') });
};
