import type { LoadedConfig } from '../config/load.ts';
import { matchesName } from '../name-glob.ts';
import { DEFAULT_MODELS, type Config } from '../config/schema.ts';
import type { ToolEntry, ToolTable } from '../engine/tool-calls.ts';
import type { PolicyLayer } from '../trust/policy.ts';
import { BUILTIN_AGENTS, type AgentProfile } from './agents.ts';
import { usableExtensions, type Extensions } from './load.ts';
import { expandCommand, findCommand, type CommandRunner } from './expand.ts';

/** The agent a session starts with when nothing names one. */
export const DEFAULT_AGENT = 'build';

/** The profile named `name`, or why there is none (then `build` stands in). */
export const findAgent = (
  extensions: Extensions,
  name: string,
): { agent: AgentProfile; problem?: string } => {
  const agent = extensions.agents.find((a) => a.name === name);
  if (agent) return { agent };
  const fallback = extensions.agents.find((a) => a.name === DEFAULT_AGENT) ?? BUILTIN_AGENTS[0]!;
  const names = extensions.agents.map((a) => a.name).join(', ');
  return {
    agent: fallback,
    problem: `no agent named "${name}" (there are: ${names}); using ${fallback.name}`,
  };
};

/** The policy layer of a profile (its `ask`/`deny` rules), if it has rules. */
export const agentPolicy = (agent: AgentProfile): PolicyLayer[] =>
  Object.keys(agent.policy).length
    ? [
        {
          source: `agent ${agent.name}${agent.file ? ` (${agent.file})` : ' (built-in)'}`,
          rules: agent.policy,
        },
      ]
    : [];

const matchesAny = (name: string, entry: ToolEntry, patterns: string[]): boolean =>
  patterns.some(
    (p) => p === name || (entry.server !== undefined && p === entry.server) || matchesName(name, p),
  );

/**
 * The tools a profile sees: with names or globs in `tools`, only those; `!name` entries take
 * tools away (from all of them when no other entry names any). A server's name stands for all
 * of its tools.
 */
export const agentTools = (table: ToolTable, agent: AgentProfile): ToolTable => {
  if (!agent.tools) return table;
  const without = agent.tools.filter((t) => t.startsWith('!')).map((t) => t.slice(1));
  const only = agent.tools.filter((t) => !t.startsWith('!'));
  return new Map(
    [...table].filter(
      ([name, entry]) =>
        (only.length === 0 || matchesAny(name, entry, only)) && !matchesAny(name, entry, without),
    ),
  );
};

/**
 * The model of a turn: the user's pick, else the command's, else the agent's, else the config's.
 * A command's or agent's model that is not configured here (Claude Code's `sonnet`, opencode's
 * `anthropic/…`) is passed over with a notice rather than failing the turn.
 */
const turnModel = (
  config: Config,
  picked: string | undefined,
  wanted: { who: string; model: string | undefined }[],
  notices: string[],
): string => {
  if (picked) return picked;
  for (const { who, model } of wanted) {
    if (!model) continue;
    if (config.models[model] || DEFAULT_MODELS[model]) return model;
    notices.push(
      `${who} asks for model "${model}", which is not configured (models: in your config); using ${config.model}`,
    );
  }
  return config.model;
};

/** What a turn runs with: its text (a custom command expanded), agent, model, policy, steps. */
export interface TurnPlan {
  text: string;
  agent: AgentProfile;
  modelName: string;
  policy: PolicyLayer[];
  maxSteps: number;
  /** Said as warnings once the turn has started. */
  notices: string[];
  /** The custom command sent, if one was. */
  command?: string;
}

export interface PlanOptions {
  loaded: LoadedConfig;
  /** The session's agent profile. */
  agent: string;
  text: string;
  /** A model the user picked for this turn (`--model`, `/model`). */
  model?: string;
  /** Subagents count their steps against `agent.subagents.maxSteps`. */
  depth: number;
  run: CommandRunner;
  excluded: string[];
  signal: AbortSignal;
}

/**
 * Plans a turn: a text that invokes a custom command is expanded (its `agent`, `model` and
 * `allowed-tools` hold for this turn); the agent profile gives the model (unless the user picked
 * one), the policy layers above the config's, and the step bound.
 */
export const planTurn = async (options: PlanOptions): Promise<TurnPlan> => {
  const { loaded, depth } = options;
  const usable = usableExtensions(loaded);
  const invoked = findCommand(usable.extensions.commands, options.text);
  const notices = depth === 0 && usable.ignored ? [usable.ignored] : [];
  const found = findAgent(usable.extensions, invoked?.command.agent ?? options.agent);
  if (found.problem) notices.push(found.problem);
  const { agent } = found;
  const policy = agentPolicy(agent);
  let text = options.text;
  if (invoked) {
    const expanded = await expandCommand(invoked.command, invoked.args, {
      root: loaded.root,
      excluded: options.excluded,
      policy: [...loaded.policy, ...policy],
      run: options.run,
      signal: options.signal,
    });
    text = expanded.text;
    policy.push(...expanded.policy);
    notices.push(...expanded.notes);
  }
  const { config } = loaded;
  return {
    text,
    agent,
    modelName: turnModel(
      config,
      options.model,
      [
        { who: `command /${invoked?.command.name}`, model: invoked?.command.model },
        { who: `agent ${agent.name}`, model: agent.model },
      ],
      notices,
    ),
    policy,
    maxSteps:
      agent.maxSteps ?? (depth > 0 ? config.agent.subagents.maxSteps : config.agent.maxSteps),
    notices,
    ...(invoked ? { command: invoked.command.name } : {}),
  };
};
