import type { MergedConfig } from '../config/load.ts';
import type { ToolPolicy } from '../config/schema.ts';
import { explainApproval, type ApprovalOutcome, type Remembered } from './approval.ts';
import { matchesName } from '../name-glob.ts';
import { composePolicy, matchRule, type PolicyLayer } from './policy.ts';
import { protectedReason, type ProtectedPlace } from './protected.ts';

// The one answer to "what may this call do?": from the config's policy layers (a repository's
// only while it is trusted: the loader drops them before), the profile chain in force — the
// session's agent, every parent of a subagent, a command's agent — as an intersection, a
// command's `allowed-tools`, what PreToolUse hooks said, protected places, and who is calling (a
// model in a session, a task, or a gateway client), and the `allowed-tools` of the session's active
// skills (yours pre-approve, a repository's never widen). Approvals, subagents, commands, the
// gateway and tasks all ask here; nothing else composes policy.

/** One profile's limits in a chain: its tightening rules and the tools it sees. */
export interface ProfileLimit {
  name: string;
  /** As the user is shown it: `agent plan (built-in)`, `agent safe (~/.niffler/agents/safe.md)`. */
  source: string;
  rules: Readonly<Record<string, Exclude<ToolPolicy, 'allow'>>>;
  /** Tool names and globs it sees (`!name` takes one away); all when absent. */
  tools?: readonly string[];
  /** Names and globs of the skills it is offered; all when absent. */
  skills?: readonly string[];
}

/**
 * An active skill's `allowed-tools`. Your own skill's pre-approve those tools while it is active
 * (as a command's do for its turn: a `deny` anywhere still wins); a repository's never widen what
 * a call may do, so they add no rule.
 */
export interface SkillGrant {
  name: string;
  source: 'user' | 'repo';
  /** As the user is shown it: `skill pdf (~/.claude/skills/pdf)`. */
  shown: string;
  tools: readonly string[];
}

/** Who makes the calls: a model (a session's turn, a subagent, a task) or a gateway client. */
export type PolicyConsumer =
  { kind: 'model'; yes: boolean; interactive: boolean } | { kind: 'client'; name: string };

/** Everything a call's policy is made of, but the call. */
export interface PolicyScope {
  config: Pick<MergedConfig, 'policy' | 'servers'> & {
    root: string;
    protectedPlaces: readonly ProtectedPlace[];
  } & Partial<Pick<MergedConfig, 'config'>>;
  /** The profiles in force, outermost first; each narrows what the ones before allow. */
  chain: readonly ProfileLimit[];
  /** Allows a command's `allowed-tools` grants for one turn (a deny anywhere still wins). */
  grants?: readonly PolicyLayer[];
  /** The session's active skills' `allowed-tools` (see `SkillGrant`). */
  skills?: readonly SkillGrant[];
  consumer: PolicyConsumer;
  remembered?: { session?: Remembered; repo?: Remembered };
}

/** What a tool is, as far as its policy goes. */
export interface ToolTraits {
  /** `engine`: niffler's own (`task`, `tool_search`, a repository tool when `asks`). */
  kind: 'builtin' | 'mcp' | 'engine';
  /** An engine tool approved as an MCP tool is (a repository tool). */
  asks?: boolean;
  readOnly: boolean;
  defaultPolicy?: 'allow' | 'ask';
  server?: string;
  destructive: boolean;
}

/** What PreToolUse hooks said of a call (block is settled before the policy is asked). */
export interface HookSay {
  allow?: string;
  ask?: string;
}

/** The policy's answer for one call, and — when it touches protected places — why. */
export interface CallPolicy extends ApprovalOutcome {
  protectedWhy?: string;
  /** What the call may do once a user approves it (bash: `git-write`, .git writable). */
  grant?: string;
}

/** A profile's rules as a policy layer (none when it has no rules). */
const layerOf = (profile: ProfileLimit): PolicyLayer[] =>
  Object.keys(profile.rules).length ? [{ source: profile.source, rules: profile.rules }] : [];

/** An active skill's rules: your own skill's tools allowed; none for a repository's (it never widens). */
const skillLayer = (skill: SkillGrant): PolicyLayer[] =>
  skill.source === 'user' && skill.tools.length
    ? [
        {
          source: `${skill.shown} allowed-tools`,
          rules: Object.fromEntries(skill.tools.map((t) => [t, 'allow' as const])),
        },
      ]
    : [];

/**
 * The layers of a scope, lowest first: the config's, the chain's, the client's, active skills',
 * the turn's grants, `extra`.
 */
const layersOf = (scope: PolicyScope, extra: PolicyLayer[] = []): PolicyLayer[] => [
  ...scope.config.policy,
  ...scope.chain.flatMap(layerOf),
  ...(scope.consumer.kind === 'client' ? clientLayer(scope) : []),
  ...(scope.skills ?? []).flatMap(skillLayer),
  ...(scope.grants ?? []),
  ...extra,
];

/** A gateway client's own `serve.clients.<name>.policy`, as the top layer. */
const clientLayer = (scope: PolicyScope): PolicyLayer[] => {
  if (scope.consumer.kind !== 'client') return [];
  const rules = scope.config.config?.serve.clients[scope.consumer.name]?.policy;
  return rules ? [{ source: `serve.clients.${scope.consumer.name}.policy`, rules }] : [];
};

/**
 * What `call` of a tool with `traits` meets under `scope`: deny, ask or allow, and why. Order: a
 * `deny` from any layer (config, any profile of the chain, a hook's ask aside) always wins; then a
 * call that touches protected places asks; then a hook's allow, `--yes`, remembered answers, the
 * highest layer with a rule, and the tool's defaults (see `explainApproval`).
 */
export const effectivePolicy = (
  scope: PolicyScope,
  call: { name: string; args: Record<string, unknown> },
  traits: ToolTraits,
  hook: HookSay = {},
): CallPolicy => {
  const asked = hook.ask
    ? [{ source: `a PreToolUse hook (${hook.ask})`, rules: { [call.name]: 'ask' as const } }]
    : [];
  const layers = layersOf(scope, asked);
  if (traits.kind === 'engine' && !traits.asks) {
    // niffler's own tools never ask; a rule that denies one still holds.
    const rule = composePolicy(layers, call.name);
    return rule?.decision === 'deny'
      ? { decision: 'deny', reason: `tools.policy "${rule.pattern}": deny (${rule.source})` }
      : { decision: 'allow', reason: "niffler's own tool" };
  }
  // A repository tool is approved as an MCP tool is.
  const kind = traits.kind === 'engine' ? 'mcp' : traits.kind;
  const protectedAt = protectedReason(
    { name: call.name, args: call.args, kind, readOnly: traits.readOnly },
    scope.config.root,
    scope.config.protectedPlaces,
    process.env,
  );
  const model = scope.consumer.kind === 'model' ? scope.consumer : undefined;
  const outcome = explainApproval(
    {
      tool: call.name,
      kind,
      ...(traits.server ? { server: traits.server } : {}),
      ...(traits.defaultPolicy ? { defaultPolicy: traits.defaultPolicy } : {}),
      readOnly: traits.readOnly,
      readOnlyHint: kind === 'mcp' ? traits.readOnly : undefined,
      destructiveHint: traits.destructive,
    },
    {
      policy: layers,
      trustedServers: scope.config.servers
        .filter((s) => s.definition.trust === true)
        .map((s) => s.name),
      ...(scope.remembered?.session ? { session: scope.remembered.session } : {}),
      ...(scope.remembered?.repo ? { repo: scope.remembered.repo } : {}),
      yes: model?.yes === true,
      ...(hook.allow ? { allowedBy: `a PreToolUse hook allowed it (${hook.allow})` } : {}),
      ...(protectedAt ? { protectedReason: protectedAt.why } : {}),
    },
  );
  return {
    ...outcome,
    ...(protectedAt ? { protectedWhy: protectedAt.why } : {}),
    ...(protectedAt?.grant && outcome.decision === 'ask' ? { grant: protectedAt.grant } : {}),
  };
};

const selected = (name: string, server: string | undefined, patterns: readonly string[]) =>
  patterns.some(
    (p) => p === name || (server !== undefined && p === server) || matchesName(name, p),
  );

/**
 * Whether every profile of the chain lets its model see the tool `name` (of MCP `server`): with
 * names or globs in `tools`, only those; `!name` entries take tools away (from all of them when
 * no other entry names any). A server's name stands for all of its tools.
 */
export const chainSees = (chain: readonly ProfileLimit[], name: string, server?: string): boolean =>
  chain.every((profile) => {
    if (!profile.tools) return true;
    const without = profile.tools.filter((t) => t.startsWith('!')).map((t) => t.slice(1));
    const only = profile.tools.filter((t) => !t.startsWith('!'));
    return (only.length === 0 || selected(name, server, only)) && !selected(name, server, without);
  });

const STRICTNESS: Record<ToolPolicy, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * Why `candidate` would let a model do more than `chain` does — a rule it loosens, a tool it sees
 * that the chain keeps away — or undefined when it is as narrow or narrower. Judged on the
 * profiles as written; where that cannot be told, it counts as wider (and asks).
 */
export const widerThan = (
  candidate: ProfileLimit,
  chain: readonly ProfileLimit[],
): string | undefined => {
  for (const profile of chain) {
    for (const [pattern, decision] of Object.entries(profile.rules)) {
      const own = matchRule(candidate.rules, pattern)?.value ?? 'allow';
      if (STRICTNESS[own] < STRICTNESS[decision])
        return `it lets ${pattern} run where ${profile.source} ${decision === 'deny' ? 'denies' : 'asks for'} it`;
    }
    const sees = toolsWider(candidate.tools, profile.tools);
    if (sees) return `it sees ${sees}, which ${profile.source} keeps away`;
  }
  return undefined;
};

/** What the tool selection `candidate` sees that `limit` does not, if anything. */
const toolsWider = (
  candidate: readonly string[] | undefined,
  limit: readonly string[] | undefined,
): string | undefined => {
  if (!limit) return undefined;
  const split = (list: readonly string[] = []) => ({
    only: list.filter((t) => !t.startsWith('!')),
    without: list.filter((t) => t.startsWith('!')).map((t) => t.slice(1)),
  });
  const c = split(candidate);
  const l = split(limit);
  if (l.only.length) {
    if (!c.only.length) return 'every tool';
    const extra = c.only.find((t) => !l.only.some((p) => p === t || matchesName(t, p)));
    if (extra) return extra;
  }
  for (const away of l.without) {
    const keptAway =
      c.without.includes(away) || (c.only.length > 0 && !selected(away, undefined, c.only));
    if (!keptAway) return away;
  }
  return undefined;
};

/** Why `scope` denies the tool `name` outright, if it does (a `` !`cmd` `` asks this of bash). */
export const deniedIn = (scope: PolicyScope, name: string): string | undefined => {
  const rule = composePolicy(layersOf(scope), name);
  return rule?.decision === 'deny' ? `${name} is denied (${rule.source})` : undefined;
};
