import { tildify } from '../paths.ts';
import { composePolicy, matchRule, type PolicyLayer } from './policy.ts';

/** A tool call waiting for a decision. `tool` is the model-facing name (`server__tool` for MCP). */
export interface ApprovalRequest {
  tool: string;
  kind: 'builtin' | 'mcp';
  /** MCP: the server's config name. */
  server?: string;
  /** Built-in: the tool's `defaultPolicy` (`read_file` allow, `bash` ask…). */
  defaultPolicy?: 'allow' | 'ask';
  /** Built-in: the tool's `readOnly` flag, used when `defaultPolicy` is absent. */
  readOnly?: boolean;
  /** MCP: the tool's `annotations.readOnlyHint`. */
  readOnlyHint?: boolean;
  /** MCP: the tool's `annotations.destructiveHint`; shown when asking, never decides. */
  destructiveHint?: boolean;
}

/** A remembered answer: a tool name or glob (`memory__*`) → allow | deny. */
export type Remembered = Readonly<Record<string, 'allow' | 'deny'>>;

export interface ApprovalSettings {
  /** `tools.policy` of each config layer, lowest first: name or glob → allow | ask | deny. */
  policy: readonly PolicyLayer[];
  /** MCP servers whose tools run without asking (`mcpServers.<name>.trust: true`). */
  trustedServers?: ReadonlySet<string> | readonly string[];
  /** Answers remembered for this session; they win over those of the repository. */
  session?: Remembered;
  /** Answers saved for this repository. */
  repo?: Remembered;
  /** `--yes`: allow everything that config does not deny, for this run. */
  yes?: boolean;
  /**
   * Why this call touches what the rules niffler runs under are made of (its config, `.git`
   * hooks…), if it does: such a call always asks, whatever allows it (see `trust/protected.ts`).
   */
  protectedReason?: string;
  /** Something that may allow a call without asking allowed it (a PreToolUse hook): why. */
  allowedBy?: string;
}

type ApprovalDecision = 'allow' | 'ask' | 'deny';

/** A decision and the rule that made it, for the UI and the transcript. */
export interface ApprovalOutcome {
  decision: ApprovalDecision;
  reason: string;
}

const ruleReason = (rule: { pattern: string; decision: string; source: string }): string =>
  `tools.policy "${rule.pattern}": ${rule.decision}${rule.source ? ` (${tildify(rule.source)})` : ''}`;

/**
 * Decides whether a tool call runs, asks, or is refused. Order: a config `deny` in any layer
 * always wins; then a call that touches niffler's own rules asks; then `--yes`; then an answer
 * remembered for the session, then for the repository; then the highest config layer with a
 * rule; then a trusted MCP server; then the defaults (built-ins by their `defaultPolicy`, MCP
 * tools allow only with `readOnlyHint: true`). Pure.
 */
export const explainApproval = (
  request: ApprovalRequest,
  settings: ApprovalSettings,
): ApprovalOutcome => {
  const configured = composePolicy(settings.policy, request.tool);
  if (configured?.decision === 'deny') return { decision: 'deny', reason: ruleReason(configured) };
  if (settings.protectedReason) return { decision: 'ask', reason: settings.protectedReason };
  if (settings.allowedBy) return { decision: 'allow', reason: settings.allowedBy };
  if (settings.yes) return { decision: 'allow', reason: '--yes' };
  const session = matchRule(settings.session ?? {}, request.tool);
  if (session)
    return { decision: session.value, reason: `remembered for this session: ${session.pattern}` };
  const repo = matchRule(settings.repo ?? {}, request.tool);
  if (repo)
    return { decision: repo.value, reason: `remembered for this repository: ${repo.pattern}` };
  if (configured) return { decision: configured.decision, reason: ruleReason(configured) };
  if (request.kind === 'mcp') {
    const trusted = [...(settings.trustedServers ?? [])];
    if (request.server && trusted.includes(request.server))
      return { decision: 'allow', reason: `server ${request.server} has trust: true` };
    return request.readOnlyHint === true
      ? { decision: 'allow', reason: 'the server marks the tool readOnlyHint' }
      : { decision: 'ask', reason: 'MCP tools ask by default' };
  }
  const fallback = request.defaultPolicy ?? (request.readOnly ? 'allow' : 'ask');
  return { decision: fallback, reason: `default for ${request.tool}: ${fallback}` };
};

/** `explainApproval` without the reason. */
export const decideApproval = (
  request: ApprovalRequest,
  settings: ApprovalSettings,
): ApprovalDecision => explainApproval(request, settings).decision;
