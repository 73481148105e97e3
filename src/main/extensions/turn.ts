import type { LoadedConfig } from './workspace-config.ts';
import { DEFAULT_MODELS, type Config } from '../config/schema.ts';
import type { ToolTable } from '../calls/types.ts';
import { NifflerError } from '../errors.ts';
import {
  chainSees,
  widerThan,
  type PolicyConsumer,
  type ProfileLimit,
} from '../trust/effective.ts';
import type { PolicyLayer } from '../trust/policy.ts';
import type { AgentProfile } from './agents.ts';
import type { CustomCommand } from './commands.ts';
import { usableExtensions, type Extensions } from './load.ts';
import { expandCommand, findCommand, type CommandRunner } from './expand.ts';

/** The agent a session starts with when nothing names one. */
export const DEFAULT_AGENT = 'build';

/** The profile named `name`; an unknown name is an error naming those that exist. */
export const findAgent = (extensions: Pick<Extensions, 'agents'>, name: string): AgentProfile => {
  const agent = extensions.agents.find((a) => a.name === name);
  if (agent) return agent;
  const names = extensions.agents.map((a) => a.name).join(', ');
  throw new NifflerError(
    'usage',
    `no agent named "${name}"; there are: ${names} (niffler agents shows what each may do)`,
  );
};

/** A profile's limits, as the effective policy composes them. */
export const profileLimit = (agent: AgentProfile): ProfileLimit => ({
  name: agent.name,
  source: `agent ${agent.name}${agent.file ? ` (${agent.file})` : ' (built-in)'}`,
  rules: agent.policy,
  ...(agent.tools ? { tools: agent.tools } : {}),
  ...(agent.skills ? { skills: agent.skills } : {}),
});

/** The tools of `table` that every profile of `chain` lets its model see. */
export const chainTools = (table: ToolTable, chain: readonly ProfileLimit[]): ToolTable =>
  new Map([...table].filter(([name, entry]) => chainSees(chain, name, entry.server)));

/**
 * The model of a turn: the user's pick, else the command's, else the agent's, else the fallback
 * (a subagent's: its parent's model), else the config's.
 * A command's or agent's model that is not configured here (Claude Code's `sonnet`, opencode's
 * `anthropic/…`) is passed over with a notice rather than failing the turn.
 */
const turnModel = (
  config: Config,
  picked: string | undefined,
  wanted: { who: string; model: string | undefined }[],
  notices: string[],
  fallback = config.model,
): string => {
  if (picked) return picked;
  for (const { who, model } of wanted) {
    if (!model) continue;
    if (config.models[model] || DEFAULT_MODELS[model]) return model;
    notices.push(
      `${who} asks for model "${model}", which is not configured (models: in your config); using ${fallback}`,
    );
  }
  return fallback;
};

/** What a turn runs with: its text (a custom command expanded), agent, model, policy, steps. */
export interface TurnPlan {
  text: string;
  /** The profile whose prompt, model and step bound the turn takes (a command's, if it names one). */
  agent: AgentProfile;
  modelName: string;
  /** The profiles in force, outermost first: a subagent's parents, the session's, a command's. */
  chain: ProfileLimit[];
  /** A command's `allowed-tools`, for this turn only. */
  grants: PolicyLayer[];
  maxSteps: number;
  /** Said as warnings once the turn has started. */
  notices: string[];
  /** The custom command sent, if one was. */
  command?: string;
  /** `/skills NAME [request]`: the skill the user activates, and what they ask of it. */
  skill?: { name: string; request: string };
}

/** `/skills NAME [request]` at the start of a prompt: the user activating a skill by hand. */
const SKILLS_COMMAND = /^\/skills(?:\s+(\S+)\s*([\s\S]*))?$/;

/** The skill a prompt activates by hand, if it is `/skills NAME …` (a bare `/skills` is an error). */
const skillInvocation = (text: string): { name: string; request: string } | undefined => {
  const match = SKILLS_COMMAND.exec(text.trim());
  if (!match) return undefined;
  if (!match[1])
    throw new NifflerError(
      'usage',
      '/skills NAME [request] activates a skill; niffler skills (or /skills in a session) lists them',
    );
  return { name: match[1], request: match[2]?.trim() ?? '' };
};

interface PlanOptions {
  loaded: LoadedConfig;
  /** The session's agent profile. */
  agent: string;
  /** A subagent's parents' chain (what its turn can never be wider than); none at depth 0. */
  inherited: readonly ProfileLimit[];
  text: string;
  /** A model the user picked for this turn (`--model`, `/model`). */
  model?: string;
  /** The model when neither the user, the command nor the agent names one (default `model`). */
  fallbackModel?: string;
  /** Subagents count their steps against `agent.subagents.maxSteps`. */
  depth: number;
  /** Asks the user to let a command switch to a wider profile (false: refused). */
  approveSwitch: (command: string, reason: string) => Promise<boolean>;
  /** Who runs the turn's calls (for a `` !`cmd` ``'s deny check). */
  consumer: PolicyConsumer;
  run: CommandRunner;
  excluded: string[];
  signal: AbortSignal;
}

/**
 * The chain a command's `agent:` makes: the session's and the command's profile together when
 * the command's is narrower (or an untrusted repository's: it can only narrow); the command's
 * alone, in place of the session's, once the user approves a wider one. Refused: an error.
 */
const commandChain = async (
  options: PlanOptions,
  usable: Extensions,
  session: AgentProfile,
  command: CustomCommand,
  notices: string[],
): Promise<{ agent: AgentProfile; chain: ProfileLimit[] }> => {
  const own = [...options.inherited, profileLimit(session)];
  if (!command.agent || command.agent === session.name) return { agent: session, chain: own };
  const target = findAgent(usable, command.agent);
  const narrowed = { agent: target, chain: [...own, profileLimit(target)] };
  const wider = widerThan(profileLimit(target), own);
  if (!wider) return narrowed;
  const what = `/${command.name} asks for agent ${target.name}, which is wider than ${session.name}: ${wider}`;
  if (command.source === 'repo' && options.loaded.trust.level !== 'trusted') {
    notices.push(
      `${what}; a command of an untrusted repository can only narrow, so the turn runs under both`,
    );
    return narrowed;
  }
  if (!(await options.approveSwitch(command.name, what)))
    throw new NifflerError(
      'usage',
      `${what}; switching needs your approval (run it in a session, or with --yes, or use --agent ${target.name})`,
    );
  notices.push(`${what}; approved for this turn`);
  return { agent: target, chain: [...options.inherited, profileLimit(target)] };
};

/**
 * Plans a turn: a text that invokes a custom command is expanded (its `agent`, `model` and
 * `allowed-tools` hold for this turn; only at depth 0: a model never invokes a command); the
 * profile chain gives the policy, the last profile the model (unless the user picked one) and
 * the step bound.
 */
export const planTurn = async (options: PlanOptions): Promise<TurnPlan> => {
  const { loaded, depth } = options;
  const usable = usableExtensions(loaded);
  // niffler's own /skills wins over a custom command of that name, as in the session.
  const skill = depth === 0 ? skillInvocation(options.text) : undefined;
  const invoked =
    depth === 0 && !skill ? findCommand(usable.extensions.commands, options.text) : undefined;
  const notices = depth === 0 && usable.ignored ? [usable.ignored] : [];
  const session = findAgent(usable.extensions, options.agent);
  const { agent, chain } = invoked
    ? await commandChain(options, usable.extensions, session, invoked.command, notices)
    : { agent: session, chain: [...options.inherited, profileLimit(session)] };
  let text = options.text;
  const grants: PolicyLayer[] = [];
  if (invoked) {
    const expanded = await expandCommand(invoked.command, invoked.args, {
      root: loaded.root,
      excluded: options.excluded,
      scope: { config: loaded, chain, consumer: options.consumer },
      run: options.run,
      signal: options.signal,
    });
    text = expanded.text;
    grants.push(...expanded.policy);
    notices.push(...expanded.notes);
  }
  const { config } = loaded;
  const bound = depth > 0 ? config.agent.subagents.maxSteps : config.agent.maxSteps;
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
      options.fallbackModel,
    ),
    chain,
    grants,
    // A subagent never runs longer than its bound, whatever its profile says.
    maxSteps: depth > 0 ? Math.min(agent.maxSteps ?? bound, bound) : (agent.maxSteps ?? bound),
    notices,
    ...(invoked ? { command: invoked.command.name } : {}),
    ...(skill ? { skill } : {}),
  };
};
