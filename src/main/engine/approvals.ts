import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
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
 * mode 0600, keyed by workspace root; never inside the repository). A missing or broken file
 * counts as empty and is replaced on the next save.
 */
export class ApprovalStore {
  readonly #file: string;
  readonly #root: string;
  readonly #sessions = new Map<string, Record<string, 'allow' | 'deny'>>();
  #repo: Record<string, 'allow' | 'deny'> = {};

  constructor(file: string, root: string) {
    this.#file = file;
    this.#root = root;
  }

  /** Reads the repository's saved answers; call once before `settingsFor`. */
  async load(): Promise<void> {
    this.#repo = { ...((await this.#read()).workspaces[this.#root] ?? {}) };
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
    const store = await this.#read();
    store.workspaces[this.#root] = this.#repo;
    await this.#write(store);
  }

  /** Forgets every answer saved for this repository. */
  async forgetRepo(): Promise<void> {
    this.#repo = {};
    const store = await this.#read();
    delete store.workspaces[this.#root];
    await this.#write(store);
  }

  async #read(): Promise<StoreFile> {
    try {
      const parsed = StoreSchema.safeParse(JSON.parse(await readFile(this.#file, 'utf8')));
      if (parsed.success) return parsed.data;
    } catch {
      // Missing or unreadable JSON: start empty; the next save rewrites the file whole.
    }
    return { version: 1, workspaces: {} };
  }

  async #write(store: StoreFile): Promise<void> {
    await mkdir(path.dirname(this.#file), { recursive: true, mode: 0o700 });
    const temp = `${this.#file}.${process.pid}.tmp`;
    await writeFile(temp, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, this.#file);
  }
}
