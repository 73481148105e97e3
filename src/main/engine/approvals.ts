import { z } from 'zod';
import { readStateFile, withStateLock, writeStateFile } from '../../workers/shared/state-file.ts';
import { tildify } from '../paths.ts';
import { composePolicy, matchRule, type PolicyLayer } from '../trust/policy.ts';

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

export type ApprovalDecision = 'allow' | 'ask' | 'deny';

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

const StoreSchema = z.object({
  version: z.literal(1),
  workspaces: z.record(z.string(), z.record(z.string(), z.enum(['allow', 'deny']))),
});
type StoreFile = z.infer<typeof StoreSchema>;

/** Where an answer is remembered: this session (memory) or this repository (`approvals.json`). */
export type RememberScope = 'session' | 'repo';

/**
 * Remembered answers: per session in memory, per repository in `file` (under `$NIFFLER_HOME`,
 * mode 0600, keyed by workspace root; never inside the repository). The file is read only as a
 * private regular file (never through a symlink); one that is missing counts as empty, one that
 * cannot be relied on too — nothing is remembered from it (`problem` says why) — and it is
 * replaced whole on the next save, under a lock so two front-ends lose nothing.
 */
export class ApprovalStore {
  readonly #file: string;
  readonly #root: string;
  readonly #sessions = new Map<string, Record<string, 'allow' | 'deny'>>();
  #repo: Record<string, 'allow' | 'deny'> = {};
  /** Why the file was not used, if it was not. */
  problem: string | undefined;

  constructor(file: string, root: string) {
    this.#file = file;
    this.#root = root;
  }

  /** Reads the repository's saved answers; call once before `settingsFor`. */
  async load(): Promise<void> {
    this.#repo = { ...(this.#read().workspaces[this.#root] ?? {}) };
  }

  /** The remembered answers to put into `ApprovalSettings` for a session. */
  remembered(sessionId: string): { session: Remembered; repo: Remembered } {
    return { session: { ...this.#sessions.get(sessionId) }, repo: { ...this.#repo } };
  }

  /** Remembers `answer` for `pattern` (a tool name or glob) in the session or the repository. */
  async remember(
    scope: RememberScope,
    sessionId: string,
    pattern: string,
    answer: 'allow' | 'deny',
  ): Promise<void> {
    if (scope === 'session') {
      this.#sessions.set(sessionId, { ...this.#sessions.get(sessionId), [pattern]: answer });
      return;
    }
    this.#repo = { ...this.#repo, [pattern]: answer };
    this.#update((store) => void (store.workspaces[this.#root] = this.#repo));
  }

  /** Forgets every answer saved for this repository. */
  async forgetRepo(): Promise<void> {
    this.#repo = {};
    this.#update((store) => void delete store.workspaces[this.#root]);
  }

  #read(): StoreFile {
    const read = readStateFile(this.#file);
    this.problem = undefined;
    if (read.kind === 'text') {
      try {
        const parsed = StoreSchema.safeParse(JSON.parse(read.text));
        if (parsed.success) return parsed.data;
      } catch {
        // Reported below.
      }
    }
    if (read.kind !== 'missing')
      this.problem = `${tildify(this.#file)}: ${read.kind === 'refused' ? read.why : 'not a valid approvals file'}; no remembered answer is used from it (the next "always" answer replaces it)`;
    return { version: 1, workspaces: {} };
  }

  #update(change: (store: StoreFile) => void): void {
    withStateLock(this.#file, () => {
      const store = this.#read();
      change(store);
      writeStateFile(this.#file, `${JSON.stringify(store, null, 2)}\n`);
    });
  }
}
